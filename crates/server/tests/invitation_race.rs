//! Issue 20 §4: one invitation, one place. Twenty requests for a place with the same invitation,
//! sent at once — twenty operating-system threads, each with its connection already open,
//! released by one barrier — get one credential nonce and one cohort place between them, over
//! every interleaving seen (the check and the taking are one transaction).

mod common;

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
        let barrier = Arc::new(Barrier::new(CLIENTS));
        let threads: Vec<_> = (0..CLIENTS)
            .map(|_| {
                let stream = std::net::TcpStream::connect(&host).unwrap();
                let (barrier, host, path, body) =
                    (barrier.clone(), host.clone(), path.clone(), body.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    post_on(stream, &host, &path, &body)
                })
            })
            .collect();
        let answers = tokio::task::spawn_blocking(move || {
            threads
                .into_iter()
                .map(|t| t.join().unwrap())
                .collect::<Vec<_>>()
        })
        .await
        .unwrap();
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
