//! Matching responses to requests: each id exactly once, as `--expect` says.

use std::collections::BTreeMap;
use std::io::Read;

use crate::frame::{scan, FrameReader, Scan};
use crate::requests::SendTimes;

/// What every response must be.
#[derive(Clone, Copy, Debug)]
pub enum Expect {
    Any,
    Result,
    Error(Option<i64>),
}

#[derive(Debug, Default)]
pub struct Counts {
    pub unique: u64,
    pub duplicates: u64,
    pub unknown_ids: u64,
    pub malformed: u64,
    pub server_messages: u64,
    pub results: u64,
    pub errors: BTreeMap<String, u64>,
    pub unexpected: u64,
}

pub struct Responses {
    requests: u64,
    expect: Expect,
    seen: Vec<bool>,
    pub latencies_ns: Vec<u64>,
    pub counts: Counts,
    pub last_ns: u64,
}

impl Responses {
    pub fn new(requests: u64, expect: Expect) -> Self {
        Self {
            requests,
            expect,
            seen: vec![false; requests as usize],
            latencies_ns: Vec::with_capacity(requests as usize),
            counts: Counts::default(),
            last_ns: 0,
        }
    }

    pub fn complete(&self) -> bool {
        self.counts.unique >= self.requests
    }

    /// Takes every complete frame already read; `now` is when the read returned.
    pub fn take(
        &mut self,
        reader: &mut FrameReader<impl Read>,
        times: &SendTimes,
        now: u64,
    ) -> Result<(), String> {
        while let Some(body) = reader
            .next_frame()
            .map_err(|err| format!("reading responses: {err}"))?
        {
            self.take_body(body, times, now);
        }
        Ok(())
    }

    /// Takes one message's body; `now` is when it was read.
    pub fn take_body(&mut self, body: &[u8], times: &SendTimes, now: u64) {
        let Some(found) = scan(body) else {
            self.counts.malformed += 1;
            return;
        };
        if found.has_method {
            self.counts.server_messages += 1;
            return;
        }
        let Some(id) = found.id.filter(|id| (1..=self.requests).contains(id)) else {
            self.counts.unknown_ids += 1;
            return;
        };
        if std::mem::replace(&mut self.seen[(id - 1) as usize], true) {
            self.counts.duplicates += 1;
            return;
        }
        self.counts.unique += 1;
        self.last_ns = now;
        self.latencies_ns
            .push(now.saturating_sub(times.sent_ns(id)));
        self.tally(&found);
    }

    fn tally(&mut self, found: &Scan) {
        let counts = &mut self.counts;
        let as_expected = match found.error {
            Some(code) => {
                let key = code.map_or("no code".to_string(), |code| code.to_string());
                *counts.errors.entry(key).or_default() += 1;
                match self.expect {
                    Expect::Any => true,
                    Expect::Result => false,
                    Expect::Error(wanted) => wanted.is_none() || wanted == code,
                }
            }
            None if found.has_result => {
                counts.results += 1;
                matches!(self.expect, Expect::Any | Expect::Result)
            }
            None => {
                counts.malformed += 1;
                false
            }
        };
        if !as_expected {
            counts.unexpected += 1;
        }
    }
}
