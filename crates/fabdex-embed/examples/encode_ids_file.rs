//! Scratch: encode JSON lines of token id lists, write raw little-endian f32 vectors.
use rayon::prelude::*;
use std::io::{BufRead, Write};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let enc = fabdex_embed::SentenceEncoder::load(std::path::Path::new(&a[1])).unwrap();
    let ids: Vec<Vec<u32>> = std::io::BufReader::new(std::fs::File::open(&a[2]).unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    let t = std::time::Instant::now();
    let out: Vec<Vec<f32>> = ids
        .par_chunks(16)
        .flat_map_iter(|c| {
            let refs: Vec<&[u32]> = c.iter().map(|v| v.as_slice()).collect();
            enc.encode_ids(&refs).unwrap()
        })
        .collect();
    eprintln!("{} vectors in {:.1}s", out.len(), t.elapsed().as_secs_f64());
    let mut f = std::fs::File::create(&a[3]).unwrap();
    for v in out {
        for x in v {
            f.write_all(&x.to_le_bytes()).unwrap();
        }
    }
}
