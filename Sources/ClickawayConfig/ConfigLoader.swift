import ClickawayCore
import Foundation
import TOMLKit

/// A configuration file's path (used in messages) and its text.
public struct ConfigFile: Sendable, Equatable {
    public var path: String
    public var text: String

    public init(path: String, text: String) {
        self.path = path
        self.text = text
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
    /// The files read, in load order.
    public let files: [String]
    public let notes: [ConfigNote]

    public var popupCount: Int { model.popups.count }
    /// Regions declared under popups, at every depth (not counting the popups' own root regions).
    public var regionCount: Int { model.popups.reduce(0) { $0 + Self.count($1.regions) } }
    public var exclusionCount: Int { model.exclusions.count }

    private static func count(_ regions: [RegionSpec]) -> Int {
        regions.reduce(regions.count) { $0 + count($1.children) }
    }
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
    /// Loads `file` alone when given (`--config FILE`), else the XDG lookup (`ConfigLocation`).
    public static func load(
        file: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigError) -> LoadedConfig {
        if let file {
            switch read(file) {
            case .text(let text): return try load([ConfigFile(path: file, text: text)])
            case .undecodable(let diagnostic): throw .invalid([diagnostic])
            case .unreadable(let reason): throw .unreadable(path: file, reason: reason)
            }
        }
        let location = ConfigLocation(environment: environment)
        let paths = location.existingFiles()
        guard !paths.isEmpty else {
            let empty = try load([])
            return LoadedConfig(model: empty.model, files: [], notes: [.noConfigFile(expectedPath: location.mainFile)])
        }
        var files: [ConfigFile] = []
        var failures: [Diagnostic] = []
        for path in paths {
            switch read(path) {
            case .text(let text): files.append(ConfigFile(path: path, text: text))
            case .undecodable(let diagnostic): failures.append(diagnostic)
            case .unreadable(let reason): failures.append(Diagnostic(file: path, message: "cannot read: \(reason)"))
            }
        }
        return try assemble(files, order: paths, failures: failures)
    }

    /// Loads files already read, in order: the lookup without the file system.
    public static func load(_ files: [ConfigFile]) throws(ConfigError) -> LoadedConfig {
        try assemble(files, order: files.map(\.path), failures: [])
    }

    // MARK: Reading files

    private enum ReadResult {
        case text(String)
        /// Readable, but not text: an error in the file, like a syntax error.
        case undecodable(Diagnostic)
        case unreadable(reason: String)
    }

    private static func read(_ path: String) -> ReadResult {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return .unreadable(reason: "no such file")
        }
        guard !isDirectory.boolValue else { return .unreadable(reason: "it is a directory") }
        guard let data = fileManager.contents(atPath: path) else {
            return .unreadable(reason: fileManager.isReadableFile(atPath: path) ? "read failed" : "permission denied")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            return .undecodable(Diagnostic(file: path, message: "not valid UTF-8 text"))
        }
        return .text(text)
    }

    // MARK: Assembling the model

    /// What one file yielded: its reader (for positions and diagnostics) unless it failed to parse.
    private struct ParsedFile {
        let reader: ConfigReader?
        let fragment: ConfigFragment
        let syntaxError: Diagnostic?

        var diagnostics: [Diagnostic] { (syntaxError.map { [$0] } ?? []) + (reader?.diagnostics ?? []) }
    }

    private static func assemble(_ files: [ConfigFile], order: [String], failures: [Diagnostic]) throws(ConfigError) -> LoadedConfig {
        let parsed = files.map(parse)
        let merged = MergedConfig(parsed.map(\.fragment))
        let problems: [ModelProblem]
        if failures.isEmpty && parsed.allSatisfy({ $0.diagnostics.isEmpty }) {
            do {
                let model = try ClickModel(settings: merged.settings, popups: merged.popups, exclusions: merged.exclusions)
                return LoadedConfig(model: model, files: files.map(\.path), notes: [])
            } catch {
                problems = error.problems
            }
        } else {
            // Still check names, parents and redirects, so one run reports everything.
            problems = ModelValidator.problems(popups: merged.namedPopups.map { merged.popups[$0] })
        }

        let locator = ProblemLocator(
            popups: merged.namedPopups.map { merged.popupOrigins[$0] }, exclusions: merged.exclusionOrigins)
        var unlocated: [Diagnostic] = []
        for problem in problems {
            if let (file, source) = locator.locate(problem.path), let reader = parsed[file].reader {
                reader.report(problem.message, at: source, .value, human: problem.path)
            } else {
                unlocated.append(Diagnostic(file: files.first?.path ?? "configuration",
                                            path: problem.path.description, message: problem.message))
            }
        }
        throw .invalid(sorted(failures + unlocated + parsed.flatMap(\.diagnostics), order: order))
    }

    private static func parse(_ file: ConfigFile) -> ParsedFile {
        switch TOMLDocument.parse(file) {
        case .parsed(let document):
            let reader = ConfigReader(file: file.path, index: document.index, lines: document.lines)
            return ParsedFile(reader: reader, fragment: reader.fragment(from: document.root), syntaxError: nil)
        case .invalid(let diagnostic):
            return ParsedFile(reader: nil, fragment: ConfigFragment(), syntaxError: diagnostic)
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

/// Turns a core `ModelPath` (indices into the merged lists) back into a file and a TOML path.
private struct ProblemLocator {
    /// Indexed like the popups the validator saw.
    let popups: [MergedConfig.Origin]
    let exclusions: [MergedConfig.Origin]

    func locate(_ path: ModelPath) -> (file: Int, source: TOMLPath)? {
        var file: Int?
        var source = TOMLPath.root
        for step in path.steps {
            switch step {
            case .popup(let i, _):
                guard popups.indices.contains(i) else { return nil }
                file = popups[i].file
                source = source.appending("popup").appending(index: popups[i].index)
            case .exclude(let i):
                guard exclusions.indices.contains(i) else { return nil }
                file = exclusions[i].file
                source = source.appending("exclude").appending(index: exclusions[i].index)
            case .region(let i, _):
                source = source.appending("region").appending(index: i)
            case .anchor(let i):
                source = source.appending("anchors").appending(index: i)
            case .table(let key), .key(let key):
                source = source.appending(key)
            }
        }
        return file.map { ($0, source) }
    }
}
