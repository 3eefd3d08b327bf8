//! The home page: what Orthomask is, in plain words, with links to the views.

use yew::prelude::*;
use yew_router::prelude::*;

use crate::route::Route;

/// The home page.
#[function_component(Home)]
pub fn home() -> Html {
    html! {
        <section class="home">
            <h1>{ "Orthomask" }</h1>
            <p class="lead">
                { "Surveys about health, money or illegal activity get refusals and untruthful answers, because people do not trust whoever ends up holding their answers. Orthomask collects answers so that nobody ever holds them." }
            </p>
            <ol class="how">
                <li>{ "Your device pads your answers with random noise and turns them with a secret random rotation. Only the turned numbers leave your device." }</li>
                <li>{ "A masking service mixes everyone's rows with its own random rotation." }</li>
                <li>{ "The survey team removes the first rotation, throws the noise away, mixes the rows once more and publishes the result." }</li>
            </ol>
            <p>{ "No single party ever sees anyone's answers, yet the published table has exactly the same averages and cross-products as the real answers, so regressions and counts computed from it are exactly right." }</p>
            <nav class="cards" aria-label="The five views">
                <Link<Route> to={Route::Participate} classes="card">
                    <h2>{ "Take a survey" }</h2>
                    <p>{ "Answer a survey; see exactly what leaves your device; keep a receipt." }</p>
                </Link<Route>>
                <Link<Route> to={Route::Analyze} classes="card">
                    <h2>{ "Analyse a release" }</h2>
                    <p>{ "Load a masked table: regression, contingency tables, logistic regression, plots, R and Python code." }</p>
                </Link<Route>>
                <Link<Route> to={Route::Classroom} classes="card">
                    <h2>{ "Classroom" }</h2>
                    <p>{ "Walk through the protocol on the 20 patients of the paper: what each party sees, and what goes wrong when it is misused." }</p>
                </Link<Route>>
                <Link<Route> to={Route::Audit} classes="card">
                    <h2>{ "Audit" }</h2>
                    <p>{ "Check a release against its manifest, with the numbers behind every check." }</p>
                </Link<Route>>
                <Link<Route> to={Route::Admin} classes="card">
                    <h2>{ "Survey team" }</h2>
                    <p>{ "Build a survey with a live preview, see the design before creating it, invite, watch the cohorts and publish." }</p>
                </Link<Route>>
            </nav>
            <p class="small">{ "Everything runs in this browser, in WebAssembly compiled from the same Rust code as the command-line tool. Methods: Wu, Chen, Burr & Zhang (2017); Ding, Miao & Wu (2020); Ding, Wu, Miao & Chen. US patent 10013569 claims related methods." }</p>
        </section>
    }
}

/// Unknown routes.
#[function_component(NotFound)]
pub fn not_found() -> Html {
    html! {
        <section>
            <h1>{ "Page not found" }</h1>
            <p><Link<Route> to={Route::Home}>{ "Back to the home page" }</Link<Route>></p>
        </section>
    }
}
