# The participant's texts in English: the survey form, the "what leaves your device" panel, the
# receipt, the offline outbox, the survey chooser and the app's frame around them (issue 13 §2). Every other catalogue in this
# directory has exactly these message ids (src/i18n/tests.rs fails otherwise). The survey's own
# texts (title, consent, questions) come from its definition, not from here.

## Language
language-label = Language
# The name of this language in itself, shown in the language switcher.
language-name = English

## Opening a survey
survey-fallback-title = Survey
survey-loading = Loading the survey…
survey-broken = This survey cannot be opened: { $reason }
survey-needs-connection = This survey needs a connection to open; nothing you answered is stored on this device.
survey-weak-plan = This survey cannot be opened: it would protect your answers less than this app requires ({ $reason }). It was refused and nothing was sent.
floor-no-qa = it has no check column, so data altered on its way could not be detected
floor-cohort = it would release a group of { $found } answers, fewer than the { $floor } needed to hide each answer among others
floor-noise-columns = it pads the answers with { $found } random numbers, fewer than the { $needed } a group of { $cohort } needs
floor-noise-level = its noise level { $found } is below the { $needed } that hides the answers
floor-unchecked = its masking cannot be checked: { $reason }
floor-share-services = it splits each answer over { $found } right-masking services, fewer than the { $needed } that keep the data collector with one of them from reading answers
floor-service-limit = its { $what } is { $found }, more than the { $limit } the services can hold, so its answers could never be used
floor-share-noise = its share noise { $found } is below the { $needed } that hides the answers from each right-masking service
floor-qa-constant = its check value { $found } is below the { $floor } needed to detect data altered on its way
floor-qa-blind = its records are so long ({ $scale }) that its check would miss changes smaller than { $revealed }
floor-dp-budget = its privacy noise { $sigma } guarantees only δ = { $found } at ε = { $epsilon } for a group of { $cohort }, more than the δ = { $stated } it promises
badge-practice = Demonstration: this survey uses a published teaching key, so answers are not private. Practise freely — nothing you enter is sent anywhere.
badge-live-demonstration = Demonstration survey: anyone may take it and its device key is given to everyone who opens it, so do not enter real personal data.
progress = Progress: { $percent }%
app-build = This page is app build { $short }. Anyone can check that it is the published build: orthomask audit --app { $origin }/ --expect { $digest }

## Consent
consent-heading = Consent
consent-agree = I have read this and agree to take part.
consent-start = Start the survey

## One question per screen
question-counter = Question { $number } of { $total }
question-optional = optional
answer-yes = Yes
answer-no = No
button-back = Back
button-skip = Skip this question
button-next = Next
button-review = Review

## Why an answer does not fit (next to the field and announced)
answer-missing = this question needs an answer
answer-not-yes-no = choose yes or no
answer-integer = enter a whole number from { $min } to { $max }
answer-number = enter a number from { $min } to { $max }
answer-likert = choose a point from 1 to { $points }
answer-category = choose one of the { $count } options
answer-wrong-kind = the answer does not match the question type
answer-no-such-question = there is no question { $number }
answer-count = expected { $expected } answers, got { $found }
answer-not-shown = this question is not asked after the earlier answer; leave it empty
answer-unknown-option = { $given } is not one of the options ({ $options })

## Announcements for screen readers
announce-loaded = Survey loaded. Please read the consent text.
announce-need-consent = Please tick the consent box to continue.
announce-invalid = Question { $number }: { $reason }
announce-all-answered = All questions answered. Review what will leave your device.
announce-sending = Sending…
announce-sending-attempt = Sending, attempt { $attempt }…
announce-sent = Sent. Your receipt is below.
announce-waiting = No connection: your masked answers wait on this device and go out when the connection returns.
announce-discarded = The waiting upload was discarded; nothing of it was sent.
announce-answering-again = Someone in your group sent invalid data, so the group was left out of the results. Your answers are being sent again in a new group…
announce-answering-again-regrouped = Too few people had answered in your group for its answers to be masked, so nothing of it was used. Your answers are being sent again in a new group…
announce-sent-again = Someone in your group sent invalid data, so the group was left out of the results; your answers were sent again in a new group. Your new receipt is below.
announce-sent-again-regrouped = Too few people had answered in your group for its answers to be masked, so nothing of it was used; your answers were sent again in a new group. Your new receipt is below.

## Review: what leaves your device
review-mask-failed = Your answers could not be masked: { $reason }
review-masking = Masking your answers on this device…
leaves-heading = What leaves your device
leaves-basic = Your answers were padded with { $p2 } random numbers and turned by a secret random rotation, so these { $count } numbers do not reveal any single answer. The masking service sees only these turned numbers, and the survey team can undo the rotation only after that service has mixed your row with everyone else's — so nobody can read or link your answers.
leaves-shares = Your { $answers } answers were padded with { $p2 } random numbers and split into { $parts } random parts that add up to them; each part goes to a different service, and each part hides your answers under random noise { $ratio } times larger than any answer this survey allows.
leaves-one-service = On its own, one part shows your answers at a signal-to-noise ratio below { $snr } — as private as a Gaussian mechanism with ε = { $epsilon } at δ = { $delta }.
leaves-shares-nobody = The survey team only ever receives everyone's rows mixed together by every service, so nobody — not one service, not the survey team — can read or link your answers.
leaves-practice-key = In this demonstration the key is published, so anyone could undo the masking: never enter real answers here.
leaves-destination = { $count } numbers to { $url }
leaves-destination-practice = { $count } numbers would go to { $url }
leaves-token = Survey { $survey }, cohort { $cohort }, submission token { $token } (it makes a retried upload count once).
practice-note = This was practice: a demonstration survey sends nothing. In a real survey, the link your survey team sends you opens its own collector's survey, and only these masked numbers would be sent.
button-change = Change my answers
button-send = Send
button-sending = Sending (attempt { $attempt })…
button-try-again = Try again

## Receipt
receipt-heading = Thank you — your masked answers were received
receipt-received-by = Received by
receipt-cohort = Cohort
receipt-time = Time
receipt-hash = Upload hash
receipt-list = Published list
receipt-list-link = Receipts of cohort { $cohort } at this service (once it closes)
receipt-explain = The hash identifies exactly what was sent; it was checked against your upload. Keep it to verify later that your record is in the published cohort.
receipt-save = Save receipt

## Answering again (the group was left out: spoilt, or regrouped with too few answers)
again-taking-place = Someone in your group sent invalid data, so that group was left out of the results. Your answers are still on this page: they are masked afresh and sent again in a new group…
again-taking-place-regrouped = Too few people had answered in your group for its answers to be masked, so nothing of it was used; your answers are still on this page and are masked afresh and sent in a new group…
again-failed = Your group was left out of the results because someone in it sent invalid data, and your answers could not be sent again yet: { $reason }
again-failed-regrouped = Too few people had answered in your group for its answers to be masked, so nothing of it was used, and your answers could not be sent in a new group yet: { $reason }
again-try = Send my answers again
again-note = Someone in your earlier group sent invalid data, so that group was left out of the results; your answers were sent again in a new group. This is your new receipt: the earlier one no longer counts.
again-note-regrouped = Too few people had answered in your earlier group for its answers to be masked, so nothing of it was used; your answers were sent again in a new group. This is your new receipt: the earlier one no longer counts.

## Waiting to send (offline)
waiting-heading = Waiting to send
waiting-explain = There is no connection. Only your masked numbers (never your answers) wait on this device, and they are sent as soon as the connection returns; the receipt is shown then.
waiting-item = Survey { $survey }, cohort { $cohort }: { $count } masked numbers
waiting-send-now = Send now
waiting-discard = Discard
waiting-sending = Sending the waiting upload…
waiting-refused = The waiting upload was not sent: { $reason }
waiting-store-failed = This browser could not keep the masked upload for later ({ $reason }); stay on this page and try again when you are online.
waiting-left-out = Someone in this group sent invalid data, so the group was left out of the results and these masked answers will not be used. Only masked numbers were kept on this device, so they cannot be sent again: please answer again through the link you were sent.
waiting-left-out-regrouped = Too few people had answered in this group for its answers to be masked, so nothing of it was used, these masked answers included. Only masked numbers were kept on this device, so they cannot be sent again: please answer again through the link you were sent.

## Choosing a survey
chooser-title = Take a survey
chooser-intro = Open the link your survey team sent you, or try a demonstration.
chooser-looking = Looking for live demonstrations…
chooser-static-host = This copy of the app runs without the Orthomask services (a static host), so the demonstrations below are practice: sending needs the services. Run `bash scripts/run.sh` to try the whole loop on your machine.
chooser-no-live = This deployment runs no live demonstration right now; its survey team sends the links to real surveys.
chooser-live-heading = Live demonstrations
chooser-live-intro = These run on this deployment's services: your answers are masked on this device and the masked numbers are really sent. They are demonstrations, so do not enter real personal data.
chooser-groups = — groups of { $size }
chooser-groups-shares = — groups of { $size }, split over several services (share mode)
chooser-practice-heading = Practice (nothing is sent)

## Practice demonstrations (bundled, nothing is sent)
practice-leaps-demo = Walking after a stroke (the paper's LEAPS questions)
practice-wellbeing-optional = Health and wellbeing (every question type, optional items)
practice-shares-demo = Share mode (collusion-resistant: three services)
practice-habits-branching = Everyday habits (questions that follow your answers; English and Spanish)

## Simulated participants (on the receipt of a live demonstration)
simulate-heading = Fill the cohort with simulated participants
simulate-explain = This is a demonstration, so nobody need wait for other people: simulated participants can take the free places of cohort { $cohort }. Each one answers at random and goes through the same masking and sending as a participant's form.
simulate-button = Let simulated participants join
simulate-counting = Counting the free places in cohort { $cohort }…
simulate-joining = { $joined } of { $of } simulated participants joined…
simulate-already-full = Cohort { $cohort } was already full: it closes on its own and the services hand it over.
simulate-done = { $joined } simulated participants joined: cohort { $cohort } is full, so it closes on its own and the services hand it over to the collector.
simulate-next-before = The survey team closes the survey and publishes the release on their page,
simulate-next-link = the survey team's page
simulate-next-after = (sign in with the admin token that scripts/run.sh printed); from there the release opens in the analyst view and the audit view.

## The app's frame (navigation, skip link, footer)
nav-label = Main
nav-home = Home
nav-participate = Take a survey
nav-analyze = Analyse a release
nav-classroom = Classroom
nav-audit = Audit
nav-admin = Survey team
skip-to-content = Skip to content
footer = Orthomask — privacy-preserving survey data collection by triple matrix masking.
