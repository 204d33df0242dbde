//! An error's chain of causes, spelled out once: for log lines, for a failure's `detail`, for
//! a command line's message.

use std::error::Error;

/// The messages of `error`'s sources (not of `error` itself), outermost first: what a log
/// line shows as the chain of causes.
pub fn source_chain(error: &dyn Error) -> Vec<String> {
    let mut chain = Vec::new();
    let mut next = error.source();
    while let Some(cause) = next {
        chain.push(cause.to_string());
        next = cause.source();
    }
    chain
}

/// `error`'s message followed by the message of each of its sources that the text so far does
/// not already contain, `: `-separated: the whole chain once, whether or not each error's
/// message repeats its source's.
pub fn chain_message(error: &dyn Error) -> String {
    let mut text = error.to_string();
    for cause in source_chain(error) {
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}
