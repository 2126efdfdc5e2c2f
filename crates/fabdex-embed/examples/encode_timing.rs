//! Times encoding one short question with a model folder: `encode_timing DIR`.
use std::time::Instant;

fn main() {
    let dir = std::env::args().nth(1).expect("usage: encode_timing MODEL_DIR");
    let enc = fabdex_embed::SentenceEncoder::load(std::path::Path::new(&dir)).expect("model loads");
    let questions = [
        "how do I make a field optional with a default value in a pattern input",
        "hide part of the page until a checkbox is ticked",
        "two embedded copies of a child widget should stay in sync on one number",
        "call a REST endpoint and show a spinner while the response loads",
    ];
    if std::env::args().nth(2).as_deref() == Some("dump") {
        // Vectors of short and long texts, singly and batched, for comparing two builds.
        let long = "A handler updates the cell when the button is clicked; the list re-renders. ".repeat(12);
        let mut texts: Vec<&str> = questions.to_vec();
        texts.push(&long);
        let singly = texts.iter().flat_map(|t| enc.encode(&[t], 128).unwrap());
        for v in enc.encode(&texts, 128).unwrap().into_iter().chain(singly) {
            println!("{}", v.iter().map(|x| format!("{x:.7}")).collect::<Vec<_>>().join(" "));
        }
        return;
    }
    for _ in 0..3 {
        enc.encode(&questions[..1], 128).unwrap();
    }
    let mut times = Vec::new();
    for i in 0..200 {
        let t = Instant::now();
        enc.encode(&[questions[i % questions.len()]], 128).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("question: p50 {:.2} ms  p99 {:.2} ms  min {:.2} ms", times[100], times[197], times[0]);
    if std::env::args().nth(2).as_deref() == Some("question") {
        return;
    }
    let long = "The pattern reads its inputs, computes a derived value and renders a list of items with a handler for each button. ".repeat(8);
    let texts: Vec<&str> = (0..64).map(|_| long.as_str()).collect();
    let t = Instant::now();
    let v = enc.encode(&texts, 128).unwrap();
    let secs = t.elapsed().as_secs_f64();
    println!("64 texts of 128 tokens: {:.2} s, {:.0} tokens/s (one thread)", secs, 64.0 * 128.0 / secs);
    assert_eq!(v.len(), 64);
}
