//! Interactive runs against real processes: a stdin fed while the command runs, and a
//! pseudo-terminal, in every containment mode this machine has.

use bytes::Bytes;
use tokio::sync::{mpsc, watch};
use wsp_exec::{ContainmentMode, OutputChunk, RunOptions, StdinStream};
use wsp_protocol::interactive::PtySize;

use crate::execute_support::{contained, containing_modes, Env};

fn every_mode() -> Vec<ContainmentMode> {
    let mut modes = containing_modes();
    modes.push(ContainmentMode::ProcessGroup);
    modes
}

/// Waits until the streamed output so far contains `wanted`; returns all of it.
async fn output_until(chunks: &mut mpsc::Receiver<OutputChunk>, seen: &mut String, wanted: &str) {
    while !seen.contains(wanted) {
        let chunk = chunks
            .recv()
            .await
            .expect("the output went on until {wanted:?}");
        seen.push_str(&chunk.data);
    }
}

#[tokio::test]
async fn a_streamed_stdin_reaches_a_command_that_already_started_and_its_end_closes_stdin() {
    for mode in every_mode() {
        let env = Env::new();
        let (input, chunks) = mpsc::channel::<Bytes>(2);
        let (sink, mut output) = mpsc::channel(16);
        let options = RunOptions {
            stdin_stream: Some(StdinStream::new(chunks)),
            output: Some(sink),
            ..contained(mode)
        };
        let run = env.sh("echo started; read line; echo got:$line; cat", options);
        let drive = async {
            let mut seen = String::new();
            // The input is written only once the command has shown it runs.
            output_until(&mut output, &mut seen, "started\n").await;
            input
                .send(Bytes::from_static(b"hello\nrest"))
                .await
                .unwrap();
            output_until(&mut output, &mut seen, "got:hello\n").await;
            drop(input);
            while output.recv().await.is_some() {}
        };
        let (result, ()) = tokio::join!(run, drive);
        assert_eq!(result.stdout, "started\ngot:hello\nrest", "{mode:?}");
        assert_eq!(result.exit_code, 0, "{mode:?}: {result:?}");
    }
}

#[tokio::test]
async fn a_pty_is_the_commands_controlling_terminal_and_follows_resizes() {
    for mode in every_mode() {
        let env = Env::new();
        let (input, chunks) = mpsc::channel::<Bytes>(2);
        let (sink, mut output) = mpsc::channel(16);
        let (resize, sizes) = watch::channel(PtySize { rows: 24, cols: 80 });
        let options = RunOptions {
            stdin_stream: Some(StdinStream::new(chunks)),
            pty: Some(sizes),
            output: Some(sink),
            ..contained(mode)
        };
        let script = "tty; echo err >&2; stty size; echo ready; read x; stty size; echo got:$x; \
                      echo at-eof; cat; echo done";
        let run = env.sh(script, options);
        let drive = async {
            let mut seen = String::new();
            output_until(&mut output, &mut seen, "ready").await;
            resize
                .send(PtySize {
                    rows: 30,
                    cols: 100,
                })
                .unwrap();
            input.send(Bytes::from_static(b"hi\n")).await.unwrap();
            output_until(&mut output, &mut seen, "at-eof").await;
            // The stream's end is the terminal's end of file: `cat` ends.
            drop(input);
            while output.recv().await.is_some() {}
        };
        let (result, ()) = tokio::join!(run, drive);
        let out = &result.stdout;
        assert!(out.starts_with("/dev/pts/"), "{mode:?}: {out:?}");
        assert!(
            out.contains("err\r\n24 80\r\nready\r\n"),
            "{mode:?}: {out:?}"
        );
        assert!(out.contains("30 100\r\ngot:hi\r\n"), "{mode:?}: {out:?}");
        assert!(out.ends_with("done\r\n"), "{mode:?}: {out:?}");
        assert_eq!(result.stderr, "", "{mode:?}");
        assert_eq!(result.exit_code, 0, "{mode:?}: {result:?}");
    }
}

#[tokio::test]
async fn the_terminals_ctrl_c_reaches_the_command_alone() {
    let python = crate::execute_support::python3().display().to_string();
    for mode in every_mode() {
        let env = Env::new();
        let (input, chunks) = mpsc::channel::<Bytes>(2);
        let (sink, mut output) = mpsc::channel(16);
        let (_resize, sizes) = watch::channel(PtySize { rows: 24, cols: 80 });
        let options = RunOptions {
            stdin_stream: Some(StdinStream::new(chunks)),
            pty: Some(sizes),
            output: Some(sink),
            ..contained(mode)
        };
        // SIGINT is blocked and then waited for, so it is taken however early it comes: a
        // handler would only run once a read that had not yet started when it came returned.
        let code = "import signal, sys\n\
                    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n\
                    print('ready', flush=True)\n\
                    signal.sigwait({signal.SIGINT})\n\
                    print('interrupted', flush=True)\n\
                    print('got', sys.stdin.readline().strip())";
        let argv = [python.as_str(), "-c", code];
        let run = env.run(&argv, options);
        let drive = async {
            let mut seen = String::new();
            output_until(&mut output, &mut seen, "ready").await;
            input.send(Bytes::from_static(b"\x03")).await.unwrap();
            output_until(&mut output, &mut seen, "interrupted").await;
            input.send(Bytes::from_static(b"x\n")).await.unwrap();
            while output.recv().await.is_some() {}
        };
        let (result, ()) = tokio::join!(run, drive);
        let result = result.unwrap();
        // Nothing between the server and the command (a PID namespace's forwarder and init)
        // is interrupted: the command exits by itself.
        assert_eq!(result.exit_code, 0, "{mode:?}: {result:?}");
        assert!(result.stdout.ends_with("got x\r\n"), "{mode:?}: {result:?}");
    }
}
