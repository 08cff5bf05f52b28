internal import ClickawayConfig
internal import ClickawaySystem
internal import Glibc
internal import Synchronization
internal import SystemPackage

/// Loads the configuration on a thread of its own. Reading, parsing, validating and keeping
/// the last good copy never hold up the poll loop: it goes on answering clicks and pinging
/// the watchdog, and takes the outcome when `descriptor` (a pipe in its poll set) is readable.
final class ConfigReloader: Sendable {
    struct Job: Sendable {
        var configFile: String?
        var environment: [String: String]
        var lastGood: LastGoodConfig
    }

    struct Outcome: Sendable {
        var result: Result<LoadedConfig, ConfigError>
        /// What to watch from now on: a symlinked file may point elsewhere.
        var watchTargets: [ConfigWatcher.Target]
        /// Why a configuration that loaded could not be kept as the last good one.
        var keepFailure: String?
    }

    /// Readable once an outcome is ready (the read end of `done`).
    var descriptor: FileDescriptor { done.readEnd }
    /// The worker writes a byte to `done` with each outcome, and sleeps reading `wake` until there is a job.
    private let done: (readEnd: FileDescriptor, writeEnd: FileDescriptor)
    private let wake: (readEnd: FileDescriptor, writeEnd: FileDescriptor)
    private let slot = Mutex<(job: Job?, outcome: Outcome?)>((nil, nil))

    /// nil if the thread cannot be started (then the loop loads by itself).
    init?() {
        guard let done = try? FileDescriptor.pipe(options: .closeOnExec), let wake = try? FileDescriptor.pipe(options: .closeOnExec),
              (try? done.readEnd.setNonBlocking()) != nil else { return nil }
        self.done = done
        self.wake = wake
        // Signals stay with the main thread: the worker starts with all of them blocked.
        var all = sigset_t(), previous = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_SETMASK, &all, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        guard pthread_create(&thread, nil, { context in
            Unmanaged<ConfigReloader>.fromOpaque(context!).takeRetainedValue().work()
            return nil
        }, context) == 0 else {
            Unmanaged<ConfigReloader>.fromOpaque(context).release()
            return nil
        }
        pthread_detach(thread)
    }

    private static func signal(_ fd: FileDescriptor) {
        _ = try? fd.writeAll([1])
    }

    /// Hands a job to the worker; one at a time (the daemon waits for its outcome first).
    func start(_ job: Job) {
        slot.withLock { $0.job = job }
        Self.signal(wake.writeEnd)
    }

    /// The outcome of the job started last, once `descriptor` is readable.
    func takeOutcome() -> Outcome? {
        var buffer: [UInt8] = []
        while let n = try? done.readEnd.readAvailable(appendingTo: &buffer, chunk: 16), n > 0 { buffer.removeAll() }
        return slot.withLock { state in
            defer { state.outcome = nil }
            return state.outcome
        }
    }

    private func work() {
        // The lowest priority (nice is per thread on Linux, `who` 0 is this one): a reload never
        // holds up the loop's thread or the X server on a busy CPU, yet still runs when the loop sleeps.
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        while true {
            var byte: [UInt8] = []
            guard (try? wake.readEnd.readAvailable(appendingTo: &byte, chunk: 1)) == 1 else { continue }
            let job: Job? = slot.withLock { state in
                defer { state.job = nil }
                return state.job
            }
            guard let job else { continue }
            let outcome = Self.perform(job)
            slot.withLock { $0.outcome = outcome }
            Self.signal(done.writeEnd)
        }
    }

    /// The whole load: on the worker, or on the loop if there is no worker.
    static func perform(_ job: Job) -> Outcome {
        let targets = Reloading.watchedPaths(configFile: job.configFile, environment: job.environment)
        do {
            let config = try ConfigLoader.load(file: job.configFile, environment: job.environment)
            return Outcome(result: .success(config), watchTargets: targets, keepFailure: job.lastGood.save(config))
        } catch {
            return Outcome(result: .failure(error), watchTargets: targets, keepFailure: nil)
        }
    }
}
