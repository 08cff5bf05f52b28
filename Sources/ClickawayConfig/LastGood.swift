internal import ClickawayTOML
internal import Glibc

/// The last configuration that loaded without errors, kept as the text of its files in
/// `$XDG_STATE_HOME/clickaway/last-good.toml` (mode 0600, replaced atomically). A daemon that
/// starts with a configuration that has errors runs with it until the files are fixed.
///
/// It is TOML, read back by the same parser, and remembers which configuration it stands
/// for: one kept for `--config A` is not used for `--config B` or for the XDG lookup.
public struct LastGoodConfig: Sendable {
    public let path: String
    /// `file PATH` for `--config PATH`, `lookup PATH` for the XDG lookup's config.toml.
    public let source: String

    public init(state: StateLocation, configFile: String?, environment: [String: String]) {
        path = state.lastGoodFile
        source = configFile.map { "file " + Self.absolute($0) } ?? "lookup " + ConfigLocation(environment: environment).mainFile
    }

    /// `--config cfg.toml` means another file in another directory.
    private static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return FileSystem.join(String(cString: cwd), path)
    }

    public enum Failure: Error, Sendable, CustomStringConvertible {
        case none
        case otherConfiguration(String)
        case unusable(String)

        public var description: String {
            switch self {
            case .none: return "there is none yet"
            case .otherConfiguration(let source): return "the one kept is for another configuration (\(source))"
            case .unusable(let why): return why
            }
        }
    }

    /// The configuration kept, loaded again from its text, and when it was saved.
    public func load() -> Result<(config: LoadedConfig, saved: String), Failure> {
        let bytes: [UInt8]
        switch FileSystem.read(path, limit: ConfigLoader.limits.maxBytes) {
        case .success(let read): bytes = read
        case .failure(.missing): return .failure(.none)
        case .failure(let failure): return .failure(.unusable("\(path): \(failure.reason)"))
        }
        let root: TOMLValue
        do {
            root = try TOMLDocument.parse(utf8: bytes).root
        } catch {
            return .failure(.unusable("\(path): \(error)"))
        }
        guard let kept = root["source"]?.string else { return .failure(.unusable("\(path) says for which configuration it is")) }
        guard kept == source else { return .failure(.otherConfiguration(kept)) }
        var files: [ConfigFile] = []
        for entry in root["file"]?.elements ?? [] {
            guard let file = entry["path"]?.string, let text = entry["text"]?.string else {
                return .failure(.unusable("\(path): a [[file]] without path or text"))
            }
            files.append(ConfigFile(path: file, text: text))
        }
        do {
            return .success((try ConfigLoader.load(files), root["saved"]?.dateTime?.description ?? "at an unknown time"))
        } catch {
            return .failure(.unusable("\(path) no longer loads:\n\(error)"))
        }
    }

    /// Keeps `config`, unless the file already holds exactly it; nil or why not.
    public func save(_ config: LoadedConfig, pause: () -> Void = {}) -> String? {
        var text = "# clickaway keeps here the last configuration that loaded without errors, to run with it\n"
            + "# when the configuration has errors at start. Written by the daemon; do not edit.\n"
            + "source = \(tomlString(source))\n"
        let body = config.sources.map {
            pause()
            return "\n[[file]]\npath = \(tomlString($0.path))\ntext = \(tomlString(String(decoding: $0.bytes, as: UTF8.self)))\n"
        }.joined()
        pause()
        if case .success(let current) = FileSystem.read(path, limit: ConfigLoader.limits.maxBytes),
           let existing = Self.stripSaved(current) {
            pause()
            if existing == Array((text + body).utf8) { return nil }
        }
        pause()
        text += "saved = \(Self.now())\n" + body
        guard text.utf8.count <= ConfigLoader.limits.maxBytes else {
            return "the configuration is too large to keep as the last good one (over \(ConfigLoader.limits.maxBytes >> 20) MiB)"
        }
        if let failure = FileSystem.makeDirectories(FileSystem.parent(of: path), mode: 0o700) { return failure }
        return FileSystem.writeAtomically(Array(text.utf8), to: path, mode: 0o600)
    }

    /// The file without its one `saved = ...` line, to compare contents; nil when it has none
    /// or several. A scan of the bytes: a reload saves, and splitting a large configuration
    /// into lines and joining them again took milliseconds of it.
    static func stripSaved(_ bytes: [UInt8]) -> [UInt8]? {
        let marker = Array("saved = ".utf8)
        var saved: Range<Int>?
        var start = 0
        while start <= bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            if bytes[start..<end].starts(with: marker) {
                guard saved == nil else { return nil }
                // The line and the newline after it; the last line takes the one before it.
                saved = end < bytes.count ? start..<(end + 1) : max(0, start - 1)..<end
            }
            start = end + 1
        }
        guard let saved else { return nil }
        var kept = bytes
        kept.removeSubrange(saved)
        return kept
    }

    /// Now, in UTC, as a TOML offset date-time.
    static func now() -> String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let seconds = Int(time.tv_sec)
        // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
        let z = seconds / 86_400 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        let second = seconds % 86_400
        return TOMLDateTime(date: .init(year: year, month: month, day: day),
                            time: .init(hour: second / 3600, minute: second / 60 % 60, second: second % 60, nanosecond: 0),
                            offsetMinutes: 0).description
    }
}
