//! Issue 20 §4: one invitation, one place. Twenty requests for a place with the same invitation,
//! sent at once — twenty operating-system threads, each with its connection already open,
//! released by one barrier — get one credential nonce and one cohort place between them, over
//! every interleaving seen (the check and the taking are one transaction).
//!
//! Issue 24: a burst of different invitations across several cohorts — every participant gets a
//! place (a busy answer says when to come back), each cohort exactly its size, and the provider
//! is asked to open each cohort once, not once per participant who found it unopened.

mod common;

use common::tap::start_tapped;
use common::*;
use orthomask_survey::trust::DefinitionOffer;
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::sync::{Arc, Barrier};

const CLIENTS: usize = 20;

/// `POST path` with a JSON body on an open connection; the answer's status and body.
fn post_on(mut stream: std::net::TcpStream, host: &str, path: &str, body: &str) -> (u16, String) {
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// Send each of `bodies` as a place request at once: one operating-system thread each, its
/// connection already open, all released by one barrier. With `retry_busy`, a 503 is sent again
/// a second later (its Retry-After) on a new connection. The answers, in `bodies`' order.
async fn at_once(
    host: &str,
    path: &str,
    bodies: Vec<String>,
    retry_busy: bool,
) -> Vec<(u16, String)> {
    let barrier = Arc::new(Barrier::new(bodies.len()));
    let threads: Vec<_> = bodies
        .into_iter()
        .map(|body| {
            let mut stream = std::net::TcpStream::connect(host).unwrap();
            let (barrier, host, path) = (barrier.clone(), host.to_owned(), path.to_owned());
            std::thread::spawn(move || {
                barrier.wait();
                loop {
                    let (status, text) = post_on(stream, &host, &path, &body);
                    if status != 503 || !retry_busy {
                        return (status, text);
                    }
                    std::thread::sleep(std::time::Duration::from_secs(1));
                    stream = std::net::TcpStream::connect(&host).unwrap();
                }
            })
        })
        .collect();
    tokio::task::spawn_blocking(move || {
        threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_loads_of_one_invitation_give_one_nonce_and_one_place() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let created = create_survey(&http, &all, &draft("race", 12, false, true)).await;
    let link = links(&http, &all, &created, 1).await.remove(0);
    let (url, token) = link.split_once("?invite=").unwrap();
    let host = all.collector.url().trim_start_matches("http://").to_owned();
    let path = url.split_once(&host).unwrap().1.to_owned();
    let body = format!("{{\"invite\": \"{token}\"}}");
    for round in 0..3 {
        let answers = at_once(&host, &path, vec![body.clone(); CLIENTS], false).await;
        let mut nonces = BTreeSet::new();
        for (status, text) in answers {
            assert_eq!(status, 200, "round {round}: {text}");
            let offer: DefinitionOffer = serde_json::from_str(&text).unwrap();
            nonces.insert(offer.credential.nonce);
        }
        assert_eq!(
            nonces.len(),
            1,
            "round {round}: one nonce for one invitation"
        );
        let view = admin_view(&http, &all, "race").await;
        assert_eq!(view["cohorts"][0]["assigned"], 1, "one place: {view}");
        assert_eq!(view["invitations"]["opened"], 1, "{view}");
    }
    all.stop().await;
}

/// `participants` invitations of a survey with cohorts of six take their places all at once
/// through the collector's tap (with `retry_busy`, a busy answer is sent again after its
/// Retry-After, as a participant's page does). Every one is answered 200 with its own place, each
/// cohort has exactly its size, and each cohort after the first (opened with the survey) was
/// opened at the provider once.
async fn burst_fills_each_cohort_once(name: &str, participants: usize, retry_busy: bool) {
    const COHORT: usize = 6;
    let dir = tempfile::tempdir().unwrap();
    let tapped = start_tapped(dir.path(), 0).await;
    let http = client();
    let created = create_survey(&http, &tapped.all, &draft(name, COHORT, false, true)).await;
    let links = links(&http, &tapped.all, &created, participants).await;
    // Participants reach the collector through its tap, as its links say.
    let host = tapped
        .collector
        .url
        .trim_start_matches("http://")
        .to_owned();
    let (url, _) = links[0].split_once("?invite=").unwrap();
    let path = url.split_once(&host).unwrap().1.to_owned();
    let bodies = links
        .iter()
        .map(|link| {
            let token = link.split_once("?invite=").unwrap().1;
            format!("{{\"invite\": \"{token}\"}}")
        })
        .collect();
    let answers = at_once(&host, &path, bodies, retry_busy).await;
    let mut nonces = BTreeSet::new();
    for (status, text) in answers {
        assert_eq!(status, 200, "{text}");
        let offer: DefinitionOffer = serde_json::from_str(&text).unwrap();
        nonces.insert(offer.credential.nonce);
    }
    assert_eq!(nonces.len(), participants, "one place each");
    let view = admin_view(&http, &tapped.all, name).await;
    for k in 0..participants / COHORT {
        assert_eq!(view["cohorts"][k]["assigned"], COHORT, "cohort {k}: {view}");
        if k > 0 {
            let opens = tapped
                .msp
                .seen_matching("POST", &format!("/cohorts/{k}/open"))
                .len();
            assert_eq!(opens, 1, "cohort {k} was opened {opens} times");
        }
    }
    tapped.all.stop().await;
}

/// Issue 24 (module documentation). Thirty invitations, cohorts of six, all at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_across_cohorts_fills_each_once_and_opens_each_once() {
    burst_fills_each_cohort_once("burst", 30, true).await;
}

/// Issue 24: a burst over more cohorts than a request used to go round for is answered without a
/// single busy answer — a place is taken in one transaction whether or not its cohort is open at
/// the services yet, and the offer waits for the opening, which starts as soon as the previous
/// cohort fills. (Before, a request that found the cohort being filled full went round again,
/// and after eight rounds got a 503: sixty participants over ten cohorts got some.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_over_ten_cohorts_needs_no_busy_answer() {
    burst_fills_each_cohort_once("wide", 60, false).await;
}

/// A place is taken before its cohort is open at the services, so when the provider refuses to
/// open it no offer leaves and the place goes back: the cohort counts none, the invitation holds
/// none, and once the provider answers again the same invitation takes the place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_place_whose_cohort_cannot_be_opened_is_given_back() {
    const COHORT: usize = 6;
    let dir = tempfile::tempdir().unwrap();
    let tapped = start_tapped(dir.path(), 0).await;
    let http = client();
    let created = create_survey(&http, &tapped.all, &draft("refused", COHORT, false, true)).await;
    let links = links(&http, &tapped.all, &created, COHORT + 1).await;
    tapped
        .msp
        .set_rule(Some(std::sync::Arc::new(|method: &str, path: &str| {
            (method == "POST" && path.contains("/cohorts/1/open"))
                .then(|| (503, r#"{"error": "refused by the test"}"#.to_owned()))
        })));
    let place = |link: &str| {
        let (url, token) = link.split_once("?invite=").unwrap();
        let http = http.clone();
        let (url, body) = (url.to_owned(), format!("{{\"invite\": \"{token}\"}}"));
        async move {
            let r = http
                .post(&url)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    // Cohort 0 (opened with the survey) fills; opening cohort 1 ahead of need is refused.
    for link in &links[..COHORT] {
        let (status, text) = place(link).await;
        assert_eq!(status, 200, "{text}");
    }
    let (status, text) = place(&links[COHORT]).await;
    assert_ne!(status, 200, "an offer for an unopened cohort: {text}");
    let view = admin_view(&http, &tapped.all, "refused").await;
    assert_eq!(
        view["cohorts"][1]["assigned"], 0,
        "the place went back: {view}"
    );
    assert_eq!(view["invitations"]["opened"], COHORT + 1, "{view}");
    // The provider answers again: the same invitation takes a place in cohort 1.
    tapped.msp.set_rule(None);
    let (status, text) = place(&links[COHORT]).await;
    assert_eq!(status, 200, "{text}");
    let offer: DefinitionOffer = serde_json::from_str(&text).unwrap();
    assert_eq!(offer.credential.cohort, 1);
    let view = admin_view(&http, &tapped.all, "refused").await;
    assert_eq!(view["cohorts"][1]["assigned"], 1, "{view}");
    tapped.all.stop().await;
}

/// The survey team closes the survey while the collector is opening the next cohort at the
/// provider (opened ahead of need, the moment the previous cohort filled): the provider's tap
/// holds the opening until the close has been sent. The close waits for the opening and then
/// closes that cohort at the provider too — never an opening that lands after the close, which
/// would leave the cohort open at the provider and the release waiting for a hand-over that
/// cannot come.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_while_the_next_cohort_opens_closes_it_after_its_opening() {
    const COHORT: usize = 6;
    let dir = tempfile::tempdir().unwrap();
    let tapped = start_tapped(dir.path(), 0).await;
    let http = client();
    let created = create_survey(&http, &tapped.all, &draft("closing", COHORT, false, true)).await;
    let links = links(&http, &tapped.all, &created, COHORT).await;
    let gate = tapped.msp.hold_until("/cohorts/1/open");
    for link in &links {
        let (url, token) = link.split_once("?invite=").unwrap();
        let r = http
            .post(url)
            .header("content-type", "application/json")
            .body(format!("{{\"invite\": \"{token}\"}}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
    }
    // The last place filled cohort 0: the opening of cohort 1 reached the provider's tap.
    tapped.msp.wait_seen("POST", "/cohorts/1/open").await;
    let close = {
        let (http, url, token) = (
            http.clone(),
            format!(
                "{}/api/admin/surveys/closing/close",
                tapped.all.collector.url()
            ),
            tapped.all.admin_token.clone(),
        );
        tokio::spawn(async move {
            http.post(url)
                .bearer_auth(token)
                .header("content-type", "application/json")
                .body("{}")
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        })
    };
    // Give the close every chance to overtake the held opening (a collector without the lock
    // closes its cohorts and answers meanwhile); no assertion depends on how long this is: with
    // the lock the close simply waits.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    gate.send(true).unwrap();
    assert_eq!(close.await.unwrap(), 200);
    let seen: Vec<String> = tapped
        .msp
        .seen()
        .into_iter()
        .filter(|s| s.method == "POST" && s.path.contains("/cohorts/1/"))
        .map(|s| s.path)
        .collect();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        seen[0].ends_with("/cohorts/1/open") && seen[1].ends_with("/cohorts/1/close"),
        "cohort 1 was opened at the provider and then closed: {seen:?}"
    );
    tapped.all.stop().await;
}
