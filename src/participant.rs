//! The participant's WebAssembly module (`scripts/build-web.sh` builds it beside the whole app's):
//! the survey form alone, so that a participant downloads only what the form runs (issue 25;
//! `orthomask_web::app` says how `index.html` chooses).

fn main() {
    orthomask_web::start_participant();
}
