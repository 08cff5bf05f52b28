internal import ClickawayConfig
internal import ClickawayCore
internal import ClickawaySystem
internal import Glibc
internal import SystemPackage

/// Loads the configuration on a thread of its own. Reading, parsing, validating and keeping
/// the last good copy never hold up the poll loop: it goes on answering clicks and pinging
/// the watchdog, and takes the outcome when `descriptor` (a pipe in its poll set) is readable.
final class ConfigReloader: Sendable {
    struct Job: Sendable {
        var configFile: String?
        var environment: [String: String]
        var lastGood: LastGoodConfig
        /// The runtime popups registered when the load started: the new configuration's model
        /// is built with those that still fit it, here rather than on the loop.
        var runtime: [PopupSpec] = []
    }

    /// A loaded configuration's model with the runtime popups of the job that still fit it
    /// (`RuntimePopups.fitting`), and those popups, in the model's order.
    struct Prepared: Sendable {
        var model: Result<ClickModel, ClickModel.Invalid>
        var specs: [PopupSpec]
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
        /// The model with the job's runtime popups; nil when the load failed or none fit.
        var prepared: Prepared?
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

        func perform(pause: () -> Void = {}) -> Built {
            Built(model: Result { () throws(ClickModel.Invalid) in try base.adding(added, pause: pause) }, version: version)
        }
    }

    struct Built: Sendable {
        var model: Result<ClickModel, ClickModel.Invalid>
        var version: Int
    }

    /// What the loop hands the worker, and what comes back.
    private enum Request: Sendable {
        case load(Job)
        case build(Build)
        /// Freed there (`free`).
        case retire(Retired, givingBack: Bool)
    }

    /// What the loop retires, in a box the worker empties: what it holds is then held by the
    /// worker alone, and its models can be freed a piece at a time. Unchecked: once sent, only
    /// the worker touches it.
    private final class Retired: @unchecked Sendable {
        var value: (any Sendable)?
        init(_ value: consuming any Sendable) { self.value = value }
    }

    private enum Reply: Sendable {
        case loaded(Outcome)
        case built(Built)
    }

    /// One message, whose reference crosses a pipe as 8 bytes written at once. Nothing is
    /// shared under a lock: the loop never waits for the worker, which runs last and,
    /// on a busy CPU, may be preempted for milliseconds while it holds one.
    private final class Envelope<Value: Sendable>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// nil if the thread cannot be started (then the loop loads by itself).
    init?() {
        guard let done = try? FileDescriptor.pipe(options: .closeOnExec), let wake = try? FileDescriptor.pipe(options: .closeOnExec),
              (try? done.readEnd.setNonBlocking()) != nil else { return nil }
        self.done = done
        self.wake = wake
        guard case .success = DetachedThread.start(named: "config-loader", work) else { return nil }
    }

    /// `value` is consumed: once written, the receiving thread holds the only reference.
    private static func send<Value: Sendable>(_ value: consuming Value, through fd: FileDescriptor) {
        let bits = UInt(bitPattern: Unmanaged.passRetained(Envelope(value)).toOpaque())
        withUnsafeBytes(of: bits) { _ = try? fd.writeAll($0) }
    }

    /// The next message on `fd`, nil when none is there (a non-blocking descriptor).
    private static func receive<Value: Sendable>(_: Value.Type, from fd: FileDescriptor) -> Value? {
        var bits: UInt = 0
        let count = withUnsafeMutableBytes(of: &bits) { (try? fd.read(into: $0)) ?? 0 }
        guard count == MemoryLayout<UInt>.size, let pointer = UnsafeMutableRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged<Envelope<Value>>.fromOpaque(pointer).takeRetainedValue().value
    }

    /// Hands a job to the worker; one at a time (the daemon waits for its outcome first).
    func start(_ job: Job) {
        Self.send(Request.load(job), through: wake.writeEnd)
    }

    /// Builds a model off the loop; `takeReady()` has it once `descriptor` is readable. One
    /// at a time (the daemon waits for it before it asks for another).
    func start(_ build: Build) {
        Self.send(Request.build(build), through: wake.writeEnd)
    }

    /// Hands over what the loop no longer uses (a replaced configuration), to be freed here:
    /// freeing 66,000 popups takes the time of a few hundred clicks. Consumed, so that the
    /// caller keeps no reference for its last release to race this thread's.
    /// `givingBack`: the memory freed goes back to the system (`FreedMemory.giveBack`).
    func retire(_ value: consuming any Sendable, givingBack: Bool = false) {
        Self.send(Request.retire(Retired(value), givingBack: givingBack), through: wake.writeEnd)
    }

    /// The model built last, and the outcome of the load started last.
    struct Ready: Sendable {
        var built: Built?
        var outcome: Outcome?

        /// Both, leaving none here.
        mutating func take() -> Ready { Ready(built: built.take(), outcome: outcome.take()) }
    }

    /// What is ready once `descriptor` is readable.
    func takeReady() -> Ready {
        var ready = Ready()
        while let reply = Self.receive(Reply.self, from: done.readEnd) {
            switch reply {
            case .built(let built): ready.built = built
            case .loaded(let outcome): ready.outcome = outcome
            }
        }
        return ready
    }

    private func work() {
        // The lowest priority, and pauses in every load and build (`BackgroundPacer`): a
        // reload never holds up the loop's thread or the X server on a busy CPU, yet still runs
        // when the loop sleeps.
        BackgroundPacer.lowerCallingThread()
        while true {
            // A retired value is freed as `serveNext` returns.
            if serveNext() == .retiredGivingBack { FreedMemory.giveBack() }
        }
    }

    private enum Served { case served, retiredGivingBack }

    private func serveNext() -> Served {
        guard let request = Self.receive(Request.self, from: wake.readEnd) else { return .served }
        var pacer = BackgroundPacer()
        switch request {
        case .retire(let retired, let givingBack):
            Self.free(retired.value.take()!) { pacer.pause() }
            return givingBack ? .retiredGivingBack : .served
        case .build(let build): Self.send(Reply.built(build.perform { pacer.pause() }), through: done.writeEnd)
        case .load(let job): Self.send(Reply.loaded(Self.perform(job) { pacer.pause() }), through: done.writeEnd)
        }
        return .served
    }

    /// Frees what the loop retired, its models a piece at a time (`ClickModel.free`): a
    /// replaced model, a replaced configuration with its model, or builds nobody waits for.
    static func free(_ retired: consuming any Sendable, pause: () -> Void) {
        var models: [ClickModel] = []
        switch copy retired {
        case let model as ClickModel: models = [model]
        case let (config, model) as (LoadedConfig, ClickModel): models = [model, config.model]
        case let ready as Ready:
            for model in [try? ready.built?.model.get(), try? ready.outcome?.prepared?.model.get(),
                          try? ready.outcome?.result.get().model] {
                if let model { models.append(model) }
            }
        default: break
        }
        _ = consume retired
        // A configuration without runtime popups runs its own model: the same one twice,
        // freed once the second reference is let go. Each is passed on as it comes out of the
        // array: from a binding, swiftc may pass a copy, and the model would never be unique.
        while !models.isEmpty { ClickModel.free(models.removeLast(), pause: pause) }
    }

    /// `loaded` with the runtime popups that fit it: building a model of 74,000 popups takes
    /// tens of milliseconds, which the loop would otherwise spend at the reload.
    static func prepare(_ loaded: ClickModel, with runtime: [PopupSpec], pause: () -> Void = {}) -> Prepared? {
        let kept = RuntimePopups.fitting(runtime, spec: { $0 }, besides: loaded).kept
        guard !kept.isEmpty else { return nil }
        return Prepared(model: Result { () throws(ClickModel.Invalid) in try loaded.adding(kept, pause: pause) }, specs: kept)
    }

    /// The whole load: on the worker, or on the loop if there is no worker. It reads stable
    /// files only: each unchanged for `quietMs` before the read and unchanged across it
    /// (a file saved in place is empty or half-written for a moment); otherwise it waits,
    /// at most `maxWaitMs`, and says so. A configuration that loads comes with its model and
    /// the job's runtime popups (`prepare`). `pause`: see `BackgroundPacer`.
    static func perform(_ job: Job, pause: () -> Void = {}) -> Outcome {
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
            do {
                result = .success(try ConfigLoader.load(file: job.configFile, environment: job.environment, pause: pause))
            } catch {
                result = .failure(error)
            }
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
                return Outcome(result: result, watchTargets: targets, keepFailure: job.lastGood.save(config, pause: pause), snapshot: after, waitedMs: waitedMs,
                               prepared: prepare(config.model, with: job.runtime, pause: pause))
            case .failure:
                return Outcome(result: result, watchTargets: targets, keepFailure: nil, snapshot: after, waitedMs: waitedMs)
            }
        }
    }
}
