//! Throughput of the Content-Length codec: many small frames, one large frame, and skipping an
//! oversized payload, each decoded from 64 KiB reads as stdin would deliver them.

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tokio_util::codec::{Decoder, Encoder};
use wsp_server::codec::FrameCodec;

const READ_SIZE: usize = 64 * 1024;

fn encoded(payloads: &[String]) -> Vec<u8> {
    let mut codec = FrameCodec::new();
    let mut wire = BytesMut::new();
    for payload in payloads {
        codec
            .encode(payload.as_str(), &mut wire)
            .expect("encoding into memory cannot fail");
    }
    wire.to_vec()
}

/// Decodes `wire` in `READ_SIZE` reads and returns the number of items.
fn decode_all(max: usize, wire: &[u8]) -> usize {
    let mut codec = FrameCodec::with_max_frame_bytes(max);
    let mut buf = BytesMut::with_capacity(READ_SIZE);
    let mut items = 0;
    for read in wire.chunks(READ_SIZE) {
        buf.extend_from_slice(read);
        while let Some(frame) = codec.decode(&mut buf).expect("decoding never fails") {
            black_box(frame);
            items += 1;
        }
    }
    while let Some(frame) = codec.decode_eof(&mut buf).expect("decoding never fails") {
        black_box(frame);
        items += 1;
    }
    items
}

fn decode_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    let small: Vec<String> = (0..10_000)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","method":"environment/get","id":{i},"params":{{"id":"env-0123456789ab"}}}}"#))
        .collect();
    let large = vec!["x".repeat(8 * 1024 * 1024)];
    for (name, payloads) in [("10k_small_frames", &small), ("one_8MiB_frame", &large)] {
        let wire = encoded(payloads);
        group.throughput(Throughput::Bytes(wire.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), &wire, |b, wire| {
            b.iter(|| decode_all(usize::MAX, wire))
        });
    }
    let oversized = encoded(&large);
    group.throughput(Throughput::Bytes(oversized.len() as u64));
    group.bench_function("skip_8MiB_frame_over_1MiB_max", |b| {
        b.iter(|| decode_all(1024 * 1024, &oversized))
    });
    group.finish();
}

fn encode_benches(c: &mut Criterion) {
    let payload = r#"{"jsonrpc":"2.0","id":1,"result":{"environments":[]}}"#;
    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Bytes(payload.len() as u64));
    group.bench_function("small_frame", |b| {
        let mut codec = FrameCodec::new();
        let mut wire = BytesMut::with_capacity(256);
        b.iter(|| {
            wire.clear();
            codec
                .encode(black_box(payload), &mut wire)
                .expect("encoding into memory cannot fail");
        })
    });
    group.finish();
}

criterion_group!(benches, decode_benches, encode_benches);
criterion_main!(benches);
