public import ClickawayCore
public import ClickawayTOML

/// A configuration file's path (used in messages) and its bytes.
public struct ConfigFile: Sendable, Equatable {
    public var path: String
    public var bytes: [UInt8]

    public init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
    }

    public init(path: String, text: String) {
        self.init(path: path, bytes: Array(text.utf8))
    }
}

/// Something worth telling the user about a configuration that loaded fine.
public enum ConfigNote: Sendable, Equatable, CustomStringConvertible {
    /// The lookup found no file at all; the daemon runs with no popups.
    case noConfigFile(expectedPath: String)

    public var description: String {
        switch self {
        case .noConfigFile(let path):
            return "no configuration file; running with no popups (create \(path) to add some)"
        }
    }
}

/// A configuration that loaded without errors.
public struct LoadedConfig: Sendable {
    public let model: ClickModel
    /// The files read, in load order, with the text they had: what `LastGoodConfig` keeps.
    public let sources: [ConfigFile]
    public let notes: [ConfigNote]
    /// `[defaults]` of every file over the built-in ones: what runtime popups inherit.
    let defaults: PopupOptions

    init(model: ClickModel, sources: [ConfigFile], notes: [ConfigNote], defaults: PopupOptions = .builtIn) {
        self.model = model
        self.sources = sources
        self.notes = notes
        self.defaults = defaults
    }

    /// `popup` with the keys `[defaults]` sets (the built-in ones where it sets none): a
    /// runtime popup starts as a configured popup that sets no key of its own would.
    public func withDefaults(_ popup: PopupSpec) -> PopupSpec { defaults.applied(to: popup) }

    public var files: [String] { sources.map(\.path) }
    public var popupCount: Int { model.popups.count }
    public var exclusionCount: Int { model.exclusions.count }
}

public enum ConfigError: Error, Sendable, CustomStringConvertible {
    /// A file named explicitly (`--config FILE`, `check FILE`) could not be read.
    case unreadable(path: String, reason: String)
    /// The configuration has errors, sorted by file, line and column.
    case invalid([Diagnostic])

    public var description: String {
        switch self {
        case .unreadable(let path, let reason):
            return Diagnostic(file: path, message: "cannot read: \(reason)").rendered
        case .invalid(let diagnostics):
            return Diagnostic.render(diagnostics)
        }
    }
}

public enum ConfigLoader {
    /// File size and nesting: any file within them loads or is refused in milliseconds.
    public static let limits = TOMLLimits.standard

    /// Loads `file` alone when given (`--config FILE`), else the XDG lookup (`ConfigLocation`).
    /// `pause` is called between small pieces of the work (a statement, a popup): a caller on a
    /// background thread lets others run there (`BackgroundPacer`).
    public static func load(file: String? = nil, environment: [String: String],
                            pause: () -> Void = {}) throws(ConfigError) -> LoadedConfig {
        if let file {
            switch FileSystem.read(file, limit: limits.maxBytes) {
            case .success(let bytes): return try load([ConfigFile(path: file, bytes: bytes)], pause: pause)
            case .failure(let failure):
                if case .tooLarge = failure { throw .invalid([Diagnostic(file: file, message: failure.reason)]) }
                throw .unreadable(path: file, reason: failure.reason)
            }
        }
        let location = ConfigLocation(environment: environment)
        let paths = location.existingFiles()
        guard !paths.isEmpty else {
            let empty = try load([])
            return LoadedConfig(model: empty.model, sources: [], notes: [.noConfigFile(expectedPath: location.mainFile)])
        }
        var files: [ConfigFile] = []
        var failures: [Diagnostic] = []
        for path in paths {
            switch FileSystem.read(path, limit: limits.maxBytes) {
            case .success(let bytes): files.append(ConfigFile(path: path, bytes: bytes))
            case .failure(let failure):
                let tooLarge = if case .tooLarge = failure { true } else { false }
                failures.append(Diagnostic(file: path, message: (tooLarge ? "" : "cannot read: ") + failure.reason))
            }
        }
        return try assemble(files, order: paths, failures: failures, pause: pause)
    }

    /// Loads files already read, in order: the lookup without the file system.
    public static func load(_ files: [ConfigFile], pause: () -> Void = {}) throws(ConfigError) -> LoadedConfig {
        try assemble(files, order: files.map(\.path), failures: [], pause: pause)
    }

    // MARK: Assembling the model

    /// What one file yielded: its document and reader unless it failed to parse.
    private struct ParsedFile {
        let path: String
        let document: TOMLDocument?
        let reader: ConfigReader?
        let fragment: ConfigFragment
        let syntaxError: Diagnostic?

        var diagnostics: [Diagnostic] { (syntaxError.map { [$0] } ?? []) + (reader?.diagnostics ?? []) }
    }

    private static func assemble(_ files: [ConfigFile], order: [String], failures: [Diagnostic],
                                 pause: () -> Void) throws(ConfigError) -> LoadedConfig {
        let parsed = files.map { parse($0, pause: pause) }
        let merged = MergedConfig(parsed.map(\.fragment))
        pause()
        let problems: [ModelProblem]
        if failures.isEmpty && parsed.allSatisfy({ $0.diagnostics.isEmpty }) {
            do {
                let model = try ClickModel(settings: merged.settings, popups: merged.popups, exclusions: merged.exclusions, pause: pause)
                return LoadedConfig(model: model, sources: files, notes: [], defaults: merged.defaults)
            } catch {
                problems = error.problems
            }
        } else {
            // Still check names, parents and redirects, so one run reports everything.
            problems = ModelValidator.problems(popups: merged.popups)
        }

        let locator = ProblemLocator(documents: parsed.map(\.document),
                                     popups: merged.popupOrigins,
                                     exclusions: merged.exclusionOrigins)
        var unlocated: [Diagnostic] = []
        for problem in problems {
            if let (file, value) = locator.locate(problem.path), let reader = parsed[file].reader {
                reader.report(problem.message, at: value.span, human: problem.path)
            } else {
                unlocated.append(Diagnostic(file: files.first?.path ?? "configuration",
                                            path: problem.path.description, message: problem.message))
            }
        }
        var report = sorted(failures + unlocated + parsed.flatMap(\.diagnostics), order: order)
        // Each file's count of errors not shown goes after its last one shown.
        for file in parsed {
            guard let omitted = file.reader?.omitted, omitted > 0 else { continue }
            let last = report.lastIndex { $0.file == file.path }.map { $0 + 1 } ?? report.endIndex
            report.insert(Diagnostic(file: file.path, message: "\(omitted) more error\(omitted == 1 ? "" : "s") in this file "
                                     + "not shown; fix the ones above first"), at: last)
        }
        throw .invalid(report)
    }

    private static func parse(_ file: ConfigFile, pause: () -> Void) -> ParsedFile {
        let lines = SourceLines(file.bytes)
        do {
            let document = try TOMLDocument.parse(utf8: file.bytes, limits: limits, pause: pause)
            let reader = ConfigReader(file: file.path, lines: lines)
            return ParsedFile(path: file.path, document: document, reader: reader,
                              fragment: reader.fragment(from: document.root, pause: pause), syntaxError: nil)
        } catch {
            let message = error.span == nil ? error.message : "invalid TOML: " + error.message
            return ParsedFile(path: file.path, document: nil, reader: nil, fragment: ConfigFragment(),
                              syntaxError: Diagnostic(file: file.path, span: error.span, lines: lines, path: "", message: message))
        }
    }

    /// By file in load order, then line and column; diagnostics about a whole file come first.
    private static func sorted(_ diagnostics: [Diagnostic], order: [String]) -> [Diagnostic] {
        let rank = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        return diagnostics.enumerated().sorted { a, b in
            let keyA = (rank[a.element.file] ?? order.count, a.element.line ?? 0, a.element.column ?? 0, a.offset)
            let keyB = (rank[b.element.file] ?? order.count, b.element.line ?? 0, b.element.column ?? 0, b.offset)
            return keyA < keyB
        }.map(\.element)
    }
}

/// Turns a core `ModelPath` (indices into the merged lists) back into a file and the value
/// written there, or the nearest enclosing one that was.
private struct ProblemLocator {
    let documents: [TOMLDocument?]
    /// Indexed like the popups the validator saw.
    let popups: [MergedConfig.Origin]
    let exclusions: [MergedConfig.Origin]

    func locate(_ path: ModelPath) -> (file: Int, value: TOMLValue)? {
        var file: Int?
        var value: TOMLValue?
        for step in path.steps {
            let next: TOMLValue?
            switch step {
            case .popup(let i, _):
                guard popups.indices.contains(i) else { return nil }
                file = popups[i].file
                next = documents[popups[i].file]?.root["popup"]?.element(popups[i].index)
            case .exclude(let i):
                guard exclusions.indices.contains(i) else { return nil }
                file = exclusions[i].file
                next = documents[exclusions[i].file]?.root["exclude"]?.element(exclusions[i].index)
            case .region(let i, _):
                next = value?["region"]?.element(i)
            case .anchor(let i):
                next = value?["anchors"]?.element(i)
            case .table(let key), .key(let key):
                next = value?[key]
            }
            guard let next else { break }
            value = next
        }
        guard let file, let value else { return nil }
        return (file, value)
    }
}
