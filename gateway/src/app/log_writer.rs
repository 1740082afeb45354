//! The log's writer thread: formatted lines go into one shared buffer, and a thread of its own
//! writes the buffer out in batches.
//!
//! Why not a line channel (`tracing-appender`): its writer thread is woken for nearly every
//! line, and on a busy gateway the wake-ups (a `futex` call, `sched_yield` spins and a context
//! switch each) cost the access log about as much as writing each line from the async worker
//! did. Here a line is appended under a mutex; only the line that finds the writer asleep wakes
//! it, and the writer then waits [`GATHER`] for the rest of the burst, so a busy gateway makes at
//! most a few hundred wake-ups and `write` calls a second whatever its request rate.
//!
//! Nothing is dropped: when [`LIMIT_BYTES`] are waiting, a logging thread waits for the writer
//! (a stalled reader of standard error stalls the gateway, as it always did). Dropping the
//! [`WriterGuard`] writes out everything still waiting, then stops the thread.

use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;
use tracing_subscriber::fmt::MakeWriter;

/// How long the writer, once woken, lets a burst of lines gather before it writes them.
pub const GATHER: Duration = Duration::from_millis(2);

/// How many bytes of formatted lines may wait before logging threads wait for the writer.
pub const LIMIT_BYTES: usize = 16 * 1024 * 1024;

/// Where log lines go: cheap to clone, one per subscriber.
#[derive(Clone)]
pub struct LogWriter {
    shared: Arc<Shared>,
}

/// Stops the writer thread when dropped, after it has written every waiting line.
#[must_use = "dropping the guard stops the log writer"]
pub struct WriterGuard {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    state: Mutex<State>,
    /// The writer waits here for lines (or for the end).
    lines_waiting: Condvar,
    /// Logging threads wait here for room when `limit` bytes are waiting.
    room: Condvar,
    limit: usize,
}

#[derive(Default)]
struct State {
    waiting: Vec<u8>,
    writer_asleep: bool,
    stopping: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A thread that panicked while holding the lock left whole lines behind (appending is
        // one `extend`), so the state is still good.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Starts the writer thread for `sink` (standard error in the binary).
pub fn start(sink: impl Write + Send + 'static) -> io::Result<(LogWriter, WriterGuard)> {
    start_with_limit(sink, LIMIT_BYTES)
}

fn start_with_limit(
    mut sink: impl Write + Send + 'static,
    limit: usize,
) -> io::Result<(LogWriter, WriterGuard)> {
    let shared = Arc::new(Shared {
        state: Mutex::new(State::default()),
        lines_waiting: Condvar::new(),
        room: Condvar::new(),
        limit,
    });
    let writer_side = Arc::clone(&shared);
    let thread = std::thread::Builder::new()
        .name("toolgate-log".into())
        .spawn(move || write_batches(&writer_side, &mut sink))?;
    Ok((LogWriter { shared: Arc::clone(&shared) }, WriterGuard { shared, thread: Some(thread) }))
}

/// The writer thread: sleeps until a line arrives, lets the burst gather, writes it in one go.
fn write_batches(shared: &Shared, sink: &mut dyn Write) {
    let mut batch = Vec::new();
    loop {
        let mut state = shared.lock();
        while state.waiting.is_empty() && !state.stopping {
            state.writer_asleep = true;
            state = shared.lines_waiting.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        state.writer_asleep = false;
        if state.waiting.is_empty() {
            return; // stopping, and everything is written
        }
        if !state.stopping {
            drop(state);
            std::thread::sleep(GATHER);
            state = shared.lock();
        }
        std::mem::swap(&mut batch, &mut state.waiting);
        drop(state);
        shared.room.notify_all();
        // Standard error gone (a closed pipe): the lines cannot be written anywhere else, and
        // the gateway keeps serving.
        let _unwritable = sink.write_all(&batch).and_then(|()| sink.flush());
        batch.clear();
    }
}

impl Drop for WriterGuard {
    fn drop(&mut self) {
        self.shared.lock().stopping = true;
        self.shared.lines_waiting.notify_one();
        if let Some(thread) = self.thread.take() {
            let _panicked = thread.join();
        }
    }
}

/// One logging thread's handle: `tracing-subscriber` writes each formatted line with one
/// `write_all`, which lands here as one `write`.
pub struct LineSink<'a> {
    shared: &'a Shared,
}

impl Write for LineSink<'_> {
    fn write(&mut self, line: &[u8]) -> io::Result<usize> {
        let shared = self.shared;
        let mut state = shared.lock();
        while !state.waiting.is_empty() && state.waiting.len() + line.len() > shared.limit && !state.stopping
        {
            state = shared.room.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        state.waiting.extend_from_slice(line);
        // Waking a writer that is awake would cost a system call for nothing.
        if state.writer_asleep {
            state.writer_asleep = false;
            drop(state);
            shared.lines_waiting.notify_one();
        }
        Ok(line.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for LogWriter {
    type Writer = LineSink<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        LineSink { shared: &self.shared }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A sink the test can read, counting its writes, optionally slow.
    #[derive(Clone, Default)]
    struct Recorder {
        bytes: Arc<Mutex<Vec<u8>>>,
        writes: Arc<AtomicUsize>,
        delay: Duration,
    }

    impl Write for Recorder {
        fn write(&mut self, buffer: &[u8]) -> io::Result<usize> {
            std::thread::sleep(self.delay);
            self.writes.fetch_add(1, Ordering::SeqCst);
            self.bytes.lock().expect("recorder").extend_from_slice(buffer);
            Ok(buffer.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn log_from_threads(writer: &LogWriter, threads: usize, lines: usize) {
        std::thread::scope(|scope| {
            for thread in 0..threads {
                scope.spawn(move || {
                    for line in 0..lines {
                        let text = format!("thread {thread} line {line}\n");
                        writer.make_writer().write_all(text.as_bytes()).expect("append");
                    }
                });
            }
        });
    }

    fn lines_per_thread(recorder: &Recorder, threads: usize) -> Vec<Vec<usize>> {
        let text = String::from_utf8(recorder.bytes.lock().expect("recorder").clone()).expect("utf-8");
        let mut seen = vec![Vec::new(); threads];
        for line in text.lines() {
            let mut words = line.split(' ');
            let (Some("thread"), Some(thread), Some("line"), Some(number), None) =
                (words.next(), words.next(), words.next(), words.next(), words.next())
            else {
                panic!("a line was torn or merged: {line:?}");
            };
            seen[thread.parse::<usize>().expect("thread")].push(number.parse().expect("number"));
        }
        seen
    }

    #[test]
    fn every_line_arrives_whole_and_in_order_once_the_guard_is_dropped() {
        let recorder = Recorder::default();
        let (writer, guard) = start(recorder.clone()).expect("start");
        log_from_threads(&writer, 4, 5_000);
        drop(guard);
        for (thread, numbers) in lines_per_thread(&recorder, 4).into_iter().enumerate() {
            assert_eq!(numbers, (0..5_000).collect::<Vec<_>>(), "thread {thread}");
        }
        // Bursts are written together: far fewer writes than lines.
        let writes = recorder.writes.load(Ordering::SeqCst);
        assert!(writes < 2_000, "{writes} writes for 20,000 lines");
    }

    #[test]
    fn a_slow_sink_makes_loggers_wait_instead_of_losing_lines() {
        let recorder = Recorder { delay: Duration::from_millis(3), ..Recorder::default() };
        // Room for about ten lines: the loggers must wait for the writer many times over.
        let (writer, guard) = start_with_limit(recorder.clone(), 200).expect("start");
        log_from_threads(&writer, 3, 300);
        drop(guard);
        for numbers in lines_per_thread(&recorder, 3) {
            assert_eq!(numbers, (0..300).collect::<Vec<_>>());
        }
        // About 16,000 bytes through a 200-byte limit: many batches.
        assert!(recorder.writes.load(Ordering::SeqCst) >= 50, "the limit bounded each batch");
    }

    #[test]
    fn a_line_longer_than_the_limit_still_goes_through() {
        let recorder = Recorder::default();
        let (writer, guard) = start_with_limit(recorder.clone(), 16).expect("start");
        let long = format!("{}\n", "x".repeat(100));
        writer.make_writer().write_all(long.as_bytes()).expect("append");
        writer.make_writer().write_all(long.as_bytes()).expect("append");
        drop(guard);
        assert_eq!(recorder.bytes.lock().expect("recorder").len(), 2 * long.len());
    }

    #[test]
    fn an_idle_writer_sleeps_and_wakes_for_the_next_line() {
        let recorder = Recorder::default();
        let (writer, guard) = start(recorder.clone()).expect("start");
        writer.make_writer().write_all(b"first\n").expect("append");
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while recorder.bytes.lock().expect("recorder").is_empty() {
            assert!(std::time::Instant::now() < deadline, "the first line was never written");
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(GATHER * 5);
        writer.make_writer().write_all(b"second\n").expect("append");
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while recorder.bytes.lock().expect("recorder").len() < 13 {
            assert!(std::time::Instant::now() < deadline, "the writer did not wake for the second line");
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(guard);
        assert_eq!(&*recorder.bytes.lock().expect("recorder"), b"first\nsecond\n");
    }
}
