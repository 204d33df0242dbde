//! Tests of `non_blocking`.

use super::*;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use tokio::io::AsyncReadExt;

/// The reading side of a socket that its last read found empty, then given `a request`,
/// which the reactor has not had a turn to see yet.
async fn reader_with_unreported_input(early_reads: EarlyReads) -> (NonBlocking, UnixStream) {
    let (ours, mut peer) = UnixStream::pair().expect("a socket pair");
    let mut reader = NonBlocking::socket_reader(ours.into(), early_reads).expect("reader");
    let mut taken = [0; 9];
    assert!(futures::poll!(Box::pin(reader.read(&mut taken))).is_pending());
    peer.write_all(b"a request").expect("write");
    (reader, peer)
}

/// `reader`, polled again at once, before the reactor has had a turn to see its input.
async fn read_at_once(reader: &mut NonBlocking) -> Poll<io::Result<usize>> {
    let mut taken = [0; 9];
    let read = futures::poll!(Box::pin(reader.read(&mut taken)));
    if let Poll::Ready(Ok(read)) = read {
        assert_eq!(&taken[..read], &b"a request"[..read]);
    }
    read
}

#[tokio::test]
async fn early_reads_find_input_the_reactor_has_not_reported() {
    let (mut reader, _peer) = reader_with_unreported_input(EarlyReads::Always).await;
    let read = read_at_once(&mut reader).await;
    assert!(matches!(read, Poll::Ready(Ok(9))), "{read:?}");

    let slots = ConnectionSlots::new(8);
    let _this_one = slots.take();
    let (mut reader, _peer) = reader_with_unreported_input(EarlyReads::WhileAlone(slots)).await;
    let read = read_at_once(&mut reader).await;
    assert!(matches!(read, Poll::Ready(Ok(9))), "alone: {read:?}");
}

#[tokio::test]
async fn beside_another_connection_a_read_waits_for_the_reactor() {
    let slots = ConnectionSlots::new(8);
    let _served = (slots.take(), slots.take());
    let (mut reader, _peer) = reader_with_unreported_input(EarlyReads::WhileAlone(slots)).await;
    let read = read_at_once(&mut reader).await;
    assert!(
        read.is_pending(),
        "read before the reactor's report: {read:?}"
    );
    let mut taken = [0; 9];
    let read = reader.read(&mut taken).await.expect("read");
    assert_eq!(&taken[..read], b"a request");
}

#[tokio::test]
async fn beside_another_connection_a_short_read_waits_for_the_next_report() {
    let slots = ConnectionSlots::new(8);
    let _served = (slots.take(), slots.take());
    let (ours, mut peer) = UnixStream::pair().expect("a socket pair");
    let mut reader =
        NonBlocking::socket_reader(ours.into(), EarlyReads::WhileAlone(slots)).expect("reader");
    peer.write_all(b"a request").expect("write");
    let mut taken = [0; 64];
    let read = reader.read(&mut taken).await.expect("read");
    assert_eq!(&taken[..read], b"a request");
    peer.write_all(b"a request").expect("write");
    let read = futures::poll!(Box::pin(reader.read(&mut taken)));
    assert!(
        read.is_pending(),
        "read past a short one before a report: {read:?}"
    );
    let read = reader.read(&mut taken).await.expect("read");
    assert_eq!(&taken[..read], b"a request");
}

#[tokio::test]
async fn a_read_past_the_task_budget_waits_for_the_next_turn() {
    let (mut reader, _peer) = reader_with_unreported_input(EarlyReads::Always).await;
    let mut taken = [0; 9];
    std::future::poll_fn(|cx| {
        while let Poll::Ready(coop) = tokio::task::coop::poll_proceed(cx) {
            coop.made_progress();
        }
        let mut buf = ReadBuf::new(&mut taken);
        let read = Pin::new(&mut reader).poll_read(cx, &mut buf);
        assert!(read.is_pending(), "read with no budget left: {read:?}");
        Poll::Ready(())
    })
    .await;
    let read = reader.read(&mut taken).await.expect("read");
    assert_eq!(&taken[..read], b"a request");
}

#[tokio::test]
async fn a_socket_writer_ends_its_side_when_it_drops_while_the_reader_lives() {
    let (ours, mut peer) = UnixStream::pair().expect("a socket pair");
    let reader = OwnedFd::from(ours);
    let writer = NonBlocking::socket_writer(reader.try_clone().expect("dup")).expect("writer");
    let _reader = NonBlocking::socket_reader(reader, EarlyReads::Never).expect("reader");
    drop(writer);
    let mut rest = Vec::new();
    peer.read_to_end(&mut rest).expect("EOF");
    assert!(rest.is_empty());
}

#[tokio::test]
async fn a_socket_is_drained_once_its_peer_took_every_byte() {
    let (ours, mut peer) = UnixStream::pair().expect("a socket pair");
    let mut writer = NonBlocking::socket_writer(ours.into()).expect("writer");
    assert!(writer.is_drained());
    tokio::io::AsyncWriteExt::write_all(&mut writer, b"an answer")
        .await
        .expect("write");
    assert!(!writer.is_drained());
    let mut taken = [0; 9];
    peer.read_exact(&mut taken).expect("read");
    assert!(writer.is_drained());
}

#[tokio::test]
async fn a_socket_writer_lets_half_of_what_the_last_read_brought_wait() {
    let (ours, mut peer) = UnixStream::pair().expect("a socket pair");
    let (mut reader, writer) =
        NonBlocking::socket_halves(ours.into(), EarlyReads::Always).expect("halves");
    assert_eq!(writer.early_write_bytes(), EARLY_WRITE_BYTES);
    let mut taken = vec![0; 64 * 1024];
    for (sent, let_wait) in [
        (3000, 1500),
        (100, EARLY_WRITE_BYTES_AT_LEAST),
        (20_000, PAGE_BYTES),
    ] {
        peer.write_all(&vec![b'r'; sent]).expect("write");
        let mut read = 0;
        while read < sent {
            read += reader.read(&mut taken[..sent - read]).await.expect("read");
        }
        assert_eq!(writer.early_write_bytes(), let_wait, "after {sent} bytes");
    }
}
