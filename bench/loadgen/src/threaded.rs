//! Two threads: a writer that renders up to the free window into one buffer and writes it, and
//! a reader (the calling thread) that is always waiting in `read(2)`, matches responses and hands
//! credits back at once. Reading overlaps writing, so at wide windows both sides batch more.

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::{self, Thread};

use crate::load::{Plan, GATE_POLL};
use crate::requests::{RequestShape, SendTimes, MAX_WRITE};
use crate::responses::Responses;
use crate::sampler::Watch;
use crate::session::Server;

/// Wide windows' buffers are written in pieces of at most this many bytes.
const WRITE_PIECE: usize = 16 * 1024;

#[derive(Default)]
struct Credits {
    received: AtomicU64,
    writer_waiting: AtomicBool,
    abort: AtomicBool,
}

pub fn drive(
    server: &mut Server,
    plan: &Plan,
    watch: &Watch,
    times: &SendTimes,
    responses: &mut Responses,
) -> Result<(), String> {
    let credits = Credits::default();
    let Server { stdin, reader, .. } = server;
    thread::scope(|scope| {
        let writer = scope.spawn(|| write_requests(stdin, plan, watch, times, &credits));
        let read = read_responses(reader, watch, times, responses, &credits, writer.thread());
        if read.is_err() {
            credits.abort.store(true, Ordering::SeqCst);
            writer.thread().unpark();
        }
        let written = writer
            .join()
            .unwrap_or_else(|_| Err("the writer thread panicked".into()));
        read.and(written)
    })
}

fn write_requests(
    stdin: &mut File,
    plan: &Plan,
    watch: &Watch,
    times: &SendTimes,
    credits: &Credits,
) -> Result<(), String> {
    let shape = RequestShape::new(&plan.method, &plan.params);
    let mut buffer = Vec::with_capacity(MAX_WRITE + 4096);
    let mut next_id = 1;
    while next_id <= plan.requests {
        if credits.abort.load(Ordering::SeqCst) {
            return Err("stopped writing: the reader gave up".into());
        }
        let in_flight = |next_id: u64| (next_id - 1) - credits.received.load(Ordering::SeqCst);
        let free = plan
            .window
            .saturating_sub(in_flight(next_id))
            .min(plan.requests + 1 - next_id);
        if free == 0 {
            credits.writer_waiting.store(true, Ordering::SeqCst);
            if in_flight(next_id) >= plan.window {
                thread::park();
            }
            credits.writer_waiting.store(false, Ordering::SeqCst);
            continue;
        }
        buffer.clear();
        let end = shape.render(&mut buffer, next_id, free);
        times.stamp(next_id, end);
        // Pieces, so that the sampler sees progress when a blocking write stalls midway.
        for piece in buffer.chunks(WRITE_PIECE) {
            stdin
                .write_all(piece)
                .map_err(|err| format!("writing requests: {err}"))?;
            watch
                .bytes_written
                .fetch_add(piece.len() as u64, Ordering::SeqCst);
        }
        next_id = end;
    }
    watch.all_written.store(true, Ordering::SeqCst);
    Ok(())
}

fn read_responses(
    reader: &mut crate::frame::FrameReader<File>,
    watch: &Watch,
    times: &SendTimes,
    responses: &mut Responses,
    credits: &Credits,
    writer: &Thread,
) -> Result<(), String> {
    while !watch.gate_open.load(Ordering::SeqCst) {
        if watch.timed_out.load(Ordering::SeqCst) {
            return Err("timed out".into());
        }
        thread::park_timeout(GATE_POLL);
    }
    while !responses.complete() {
        match reader.fill() {
            Ok(0) => return Err("EOF before every response arrived".into()),
            Ok(_) => responses.take(reader, times, times.now_ns())?,
            Err(err) => return Err(format!("reading responses: {err}")),
        }
        credits
            .received
            .store(responses.counts.unique, Ordering::SeqCst);
        if credits.writer_waiting.load(Ordering::SeqCst) {
            writer.unpark();
        }
    }
    Ok(())
}
