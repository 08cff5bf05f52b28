internal import ClickawayConfig
internal import ClickawayCore
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
        /// The files as they were, unchanged, across the read.
        var snapshot: ConfigSnapshot
        /// How long the load waited for the files to stop changing (0: not at all).
        var waitedMs: Int64 = 0
    }

    /// A file changed less than this long ago may still be being written: the load waits
    /// until it has been quiet this long (the watcher's own quiet period).
    static let quietMs = ConfigWatcher.debounceMs
    /// Files that keep changing longer than this are not loaded at all.
    static let maxWaitMs: Int64 = 5000

    /// Readable once an outcome is ready (the read end of `done`).
    var descriptor: FileDescriptor { done.readEnd }
    /// The worker writes a byte to `done` with each outcome, and sleeps reading `wake` until there is a job.
    private let done: (readEnd: FileDescriptor, writeEnd: FileDescriptor)
    private let wake: (readEnd: FileDescriptor, writeEnd: FileDescriptor)
    /// A model with runtime popups to build: the configured one and the popups added to it,
    /// numbered so that the loop can tell a build it no longer needs.
    struct Build: Sendable {
        var base: ClickModel
        var added: [PopupSpec]
        var version: Int

        func perform() -> Built { Built(model: Result { () throws(ClickModel.Invalid) in try base.adding(added) }, version: version) }
    }

    struct Built: Sendable {
        var model: Result<ClickModel, ClickModel.Invalid>
        var version: Int
    }

    private let slot = Mutex<(job: Job?, outcome: Outcome?, build: Build?, built: Built?, retired: [any Sendable])>((nil, nil, nil, nil, []))

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

    /// Builds a model off the loop; `takeReady()` has it once `descriptor` is readable. A
    /// build not started yet is replaced.
    func start(_ build: Build) {
        slot.withLock { $0.build = build }
        Self.signal(wake.writeEnd)
    }

    /// Hands over what the loop no longer uses (a replaced configuration), to be freed here:
    /// freeing 66,000 popups takes the time of a few hundred clicks.
    func retire(_ value: any Sendable) {
        slot.withLock { $0.retired.append(value) }
        Self.signal(wake.writeEnd)
    }

    /// What is ready once `descriptor` is readable: the model built last, and the outcome of
    /// the load started last.
    func takeReady() -> (built: Built?, outcome: Outcome?) {
        var buffer: [UInt8] = []
        while let n = try? done.readEnd.readAvailable(appendingTo: &buffer, chunk: 16), n > 0 { buffer.removeAll() }
        return slot.withLock { state in
            defer { (state.built, state.outcome) = (nil, nil) }
            return (state.built, state.outcome)
        }
    }

    private func work() {
        // The lowest priority (nice is per thread on Linux, `who` 0 is this one): a reload never
        // holds up the loop's thread or the X server on a busy CPU, yet still runs when the loop sleeps.
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        while true {
            var byte: [UInt8] = []
            guard (try? wake.readEnd.readAvailable(appendingTo: &byte, chunk: 1)) == 1 else { continue }
            var (job, build, retired): (Job?, Build?, [any Sendable]) = slot.withLock { state in
                defer { (state.job, state.build, state.retired) = (nil, nil, []) }
                return (state.job, state.build, state.retired)
            }
            retired.removeAll()
            if let build {
                let built = build.perform()
                slot.withLock { $0.built = built }
                Self.signal(done.writeEnd)
            }
            if let job {
                let outcome = Self.perform(job)
                slot.withLock { $0.outcome = outcome }
                Self.signal(done.writeEnd)
            }
        }
    }

    /// The whole load: on the worker, or on the loop if there is no worker. It reads stable
    /// files only: each unchanged for `quietMs` before the read and unchanged across it
    /// (a file saved in place is empty or half-written for a moment); otherwise it waits,
    /// at most `maxWaitMs`, and says so.
    static func perform(_ job: Job) -> Outcome {
        let targets = Reloading.watchedPaths(configFile: job.configFile, environment: job.environment)
        let started = MonotonicClock.milliseconds()
        var waited = false
        while true {
            let before = ConfigSnapshot.take(configFile: job.configFile, environment: job.environment)
            let elapsed = MonotonicClock.milliseconds() - started
            if let quiet = before.quietForMs(), quiet < quietMs, elapsed < maxWaitMs {
                waited = true
                usleep(useconds_t((quietMs - quiet) * 1000))
                continue
            }
            let result: Result<LoadedConfig, ConfigError>
            do { result = .success(try ConfigLoader.load(file: job.configFile, environment: job.environment)) } catch { result = .failure(error) }
            let after = ConfigSnapshot.take(configFile: job.configFile, environment: job.environment)
            guard after == before else {
                waited = true
                if MonotonicClock.milliseconds() - started < maxWaitMs { continue }
                let path = zip(before.entries, after.entries).first { $0 != $1 }?.0.path ?? after.entries.first?.path ?? "the configuration"
                return Outcome(result: .failure(.unreadable(path: path, reason: "it kept changing for \(maxWaitMs / 1000) s while being read; nothing was reloaded")),
                               watchTargets: targets, keepFailure: nil, snapshot: after, waitedMs: MonotonicClock.milliseconds() - started)
            }
            let waitedMs = waited ? max(1, MonotonicClock.milliseconds() - started) : 0
            switch result {
            case .success(let config):
                return Outcome(result: result, watchTargets: targets, keepFailure: job.lastGood.save(config), snapshot: after, waitedMs: waitedMs)
            case .failure:
                return Outcome(result: result, watchTargets: targets, keepFailure: nil, snapshot: after, waitedMs: waitedMs)
            }
        }
    }
}
