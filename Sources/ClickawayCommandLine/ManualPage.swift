internal import Glibc

/// The date a man page carries: `.Dd November 24, 2026`.
struct ManualDate {
    let year: Int
    let month: Int
    let day: Int

    /// YYYY-MM-DD, as the Makefile takes it from the last commit.
    init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 3, let year = parts[0], let month = parts[1], let day = parts[2],
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        (self.year, self.month, self.day) = (year, month, day)
    }

    static func today() -> ManualDate {
        var now = time(nil)
        var fields = tm()
        gmtime_r(&now, &fields)
        return ManualDate(year: Int(fields.tm_year) + 1900, month: Int(fields.tm_mon) + 1, day: Int(fields.tm_mday))
    }

    private init(year: Int, month: Int, day: Int) {
        (self.year, self.month, self.day) = (year, month, day)
    }

    private static let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                                 "October", "November", "December"]

    var text: String { "\(Self.months[month - 1]) \(day), \(year)" }
}

/// The program's section 1 page in mdoc, from the definitions `--help` prints: options,
/// subcommands with theirs, the discussion paragraphs, the exit statuses, and the sections
/// only the page has (`CommandConfiguration.manual`). Help's text is plain: `backticks`
/// become `.Ql`, paths `.Pa` (which neither hyphenates nor breaks), `name(N)` `.Xr`.
enum ManualPage {
    static func page(for root: CommandNode, date: ManualDate) -> String {
        let configuration = root.configuration
        let version = configuration.version.split(separator: "\n").first.map { " " + text(String($0)) } ?? ""
        var lines = [
            ".\\\" \(root.name)(1), written by `\(root.name) --generate-manual`: change the program's help, not this page.",
            ".Dd \(date.text)",
            // groff 1.22 heads the page "BSD General Commands Manual" unless this is empty; mandoc ignores it.
            ".ds doc-volume-operating-system",
            ".Dt \(root.name.uppercased()) 1",
            // The footer names the program and its version, not the operating system.
            ".Os\(version)",
            ".Sh NAME",
            ".Nm \(root.name)",
            ".Nd " + sentence(configuration.abstract).split(separator: " ").map { escapedArgument(String($0)) }.joined(separator: " "),
            ".Sh SYNOPSIS",
            ".Nm",
        ]
        if root.subcommands.isEmpty {
            lines += root.definitions.map(synopsis)
        } else {
            lines.append(".Ar subcommand")
        }
        lines.append(".Sh DESCRIPTION")
        lines += paragraphs(configuration.discussion.isEmpty ? configuration.abstract : configuration.discussion)

        lines += [".Sh OPTIONS", ".Bl -tag -width 6n"]
        lines += root.definitions.filter(\.isNamed).flatMap(item)
        if !configuration.version.isEmpty { lines += [".It Fl V , Fl -version"] + paragraphs(HelpText.versionHelp) }
        lines += [".It Fl h , Fl -help"] + paragraphs(HelpText.helpHelp) + [".El"]

        if !root.subcommands.isEmpty {
            lines += [".Sh COMMANDS", ".Bl -tag -width 6n"]
            for command in root.subcommands { lines += subcommand(command) }
            lines.append(".El")
        }
        let examples = configuration.manual.filter { $0.title == "EXAMPLES" }
        for section in configuration.manual where section.title != "EXAMPLES" { lines += Self.section(section) }
        if !configuration.exitStatuses.isEmpty {
            lines += [".Sh EXIT STATUS", ".Bl -tag -width 4n"]
            for entry in configuration.exitStatuses { lines += [".It \(entry.status)"] + paragraphs(entry.meaning) }
            lines.append(".El")
        }
        for section in examples { lines += Self.section(section) }
        let others = ["clickaway 1", "clickawayctl 1", "clickaway.toml 5"].filter { $0 != "\(root.name) 1" }
        lines.append(".Sh SEE ALSO")
        lines += others.enumerated().map { ".Xr \($0.element)" + ($0.offset < others.count - 1 ? " ," : "") }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func section(_ section: ManualSection) -> [String] {
        var lines = [".Sh \(section.title)"]
        for (index, block) in section.blocks.enumerated() {
            switch block {
            case .text(let text):
                if index > 0 { lines.append(".Pp") }
                lines += paragraphs(text)
            case .list(let kind, let items):
                lines.append(".Bl -tag -width Ds")
                for item in items { lines += [".It " + term(item.term, kind)] + paragraphs(item.text) }
                lines.append(".El")
            case .literal(let text):
                lines.append(".Bd -literal -offset indent")
                lines += text.split(separator: "\n", omittingEmptySubsequences: false).map { Self.text(String($0)) }
                lines.append(".Ed")
            }
        }
        return lines
    }

    private static func term(_ term: String, _ kind: ManualTerm) -> String {
        let words = term.split(separator: " ").map { escapedArgument(String($0)) }.joined(separator: " ")
        return switch kind {
        case .path: "Pa \(words)"
        case .variable: "Ev \(words)"
        case .signal: "Dv \(words)"
        case .command: "Ic \(words)"
        case .plain: words
        }
    }

    private static func subcommand(_ command: CommandNode) -> [String] {
        let configuration = command.configuration
        var lines = [".It Em \(command.name)"] + paragraphs(configuration.abstract)
        if !configuration.discussion.isEmpty {
            lines.append(".Pp")
            lines += paragraphs(configuration.discussion)
        }
        let definitions = command.definitions
        lines += [".Pp", ".Nm", ".Cm \(command.name)"] + definitions.map(synopsis)
        if !definitions.isEmpty {
            lines.append(".Bl -tag -width 6n")
            lines += definitions.flatMap(item)
            lines.append(".El")
        }
        return lines
    }

    /// `.Op Fl -config Ar file`.
    private static func synopsis(_ definition: ArgumentDefinition) -> String {
        var words = macroWords(definition)
        if definition.isRepeated { words += " No ..." }
        return definition.isOptional ? ".Op \(words)" : ".\(words)"
    }

    /// `Fl -config Ar file`, `Ar x`, `Fl -escape | Fl -no-escape`.
    private static func macroWords(_ definition: ArgumentDefinition) -> String {
        switch definition.kind {
        case .option: "Fl -\(definition.name) Ar \(escapedArgument(definition.valueName))"
        case .flag(let invertible): invertible ? "Fl -\(definition.name) | Fl -no-\(definition.name)" : "Fl -\(definition.name)"
        case .positional: "Ar \(escapedArgument(definition.valueName))"
        case .postTerminator: "Fl - Ar \(escapedArgument(definition.valueName))"
        }
    }

    /// `.It Fl c , Fl -config Ar file` when the option has a one-letter spelling too.
    private static func item(_ definition: ArgumentDefinition) -> [String] {
        let short = definition.short.map { "Fl \($0) , " } ?? ""
        return [".It \(short)\(macroWords(definition))"] + paragraphs(HelpText.describe(definition))
    }

    private static func paragraphs(_ text: String) -> [String] {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n") {
            if !lines.isEmpty { lines.append(".Pp") }
            lines += inline(String(paragraph))
        }
        return lines
    }

    /// One paragraph of help's plain text as mdoc lines: text lines, and a macro line for
    /// each `literal`, path and `name(N)`, with the punctuation that closes it.
    static func inline(_ paragraph: String) -> [String] {
        var lines: [String] = []
        var pending = ""
        func flush() {
            lines += sentences(pending.trimmingCharacters(in: " ")).map(text).map(abbreviated).map(unhyphenated)
            pending = ""
        }
        var rest = Substring(paragraph)
        while !rest.isEmpty {
            guard let (before, macro, after) = nextMacro(in: rest) else {
                pending += rest
                break
            }
            pending += before
            // Opening brackets right before it go on its line, so no space follows them.
            var opening: [String] = []
            while let last = pending.last, "([".contains(last) {
                opening.insert(String(last), at: 0)
                pending.removeLast()
            }
            flush()
            let name = macro.prefix { $0 != " " }
            var line = "." + ([String(name)] + opening + [String(macro[name.endIndex...].dropFirst())]).joined(separator: " ")
            rest = after
            // Closing punctuation right after it is its delimiters; a word stuck to it follows `Ns`.
            var closing = rest.prefix { ".,;:)]?!".contains($0) }
            if closing.count < rest.count, !rest[closing.endIndex].isWhitespace {
                closing = closing.prefix(0)
                var word = rest.prefix { !$0.isWhitespace && $0 != "`" }
                rest = rest[word.endIndex...]
                var trailing: [String] = []
                while let last = word.last, ".,;:)]?!".contains(last), word.count > 1 {
                    trailing.insert(String(last), at: 0)
                    word = word.dropLast()
                }
                line += " Ns " + ([escapedArgument(String(word))] + trailing).joined(separator: " ")
            } else {
                line += closing.map { " \($0)" }.joined()
                rest = rest[closing.endIndex...]
            }
            lines.append(line)
            rest = rest.drop { $0 == " " }
        }
        flush()
        return lines
    }

    /// A text line per sentence, as mdoc wants (a sentence's end is where the next one starts).
    private static func sentences(_ line: String) -> [String] {
        var result: [String] = []
        var current = ""
        var characters = line[...]
        while let character = characters.popFirst() {
            current.append(character)
            guard ".?!".contains(character), characters.first == " " else { continue }
            let word = current.split(separator: " ").last ?? ""
            let next = characters.first { $0 != " " }
            if word == "e.g." || word == "i.e." || word.count == 2 && word.first!.isUppercase || next?.isLowercase == true {
                current.append(Self.notAnEnd)
                continue
            }
            result.append(current)
            current = ""
            characters = characters.drop { $0 == " " }
        }
        if !current.isEmpty { result.append(current) }
        return result
    }

    /// Options and slashed words (`--rect/--window`) are not hyphenated: `\%` before them says so.
    private static func unhyphenated(_ line: String) -> String {
        line.split(separator: " ", omittingEmptySubsequences: false).map { word in
            word.hasPrefix("-") || word.hasPrefix("(-") || word.contains("/" as Character) ? "\\%" + word : String(word)
        }.joined(separator: " ")
    }

    /// Marks a period, question or exclamation mark mid-line that ends no sentence ("e.g.",
    /// "0x... or"), until `abbreviated` writes it as `\&`.
    private static let notAnEnd: Character = "\u{E000}"

    private static func abbreviated(_ line: String) -> String {
        line.replacingEach(notAnEnd, with: "\\&")
    }

    /// The first `literal`, path or `name(N)` in `text`: the text before it, its macro
    /// with arguments, and the text after it.
    private static func nextMacro(in text: Substring) -> (Substring, String, Substring)? {
        var index = text.startIndex
        while index < text.endIndex {
            if text[index] == "`", let close = text[text.index(after: index)...].firstIndex(of: "`") {
                let content = String(text[text.index(after: index)..<close])
                let words = content.split(separator: " ").map { escapedArgument(String($0)).replacingQuotes }.joined(separator: " ")
                guard !words.isEmpty else { index = text.index(after: close); continue }
                return (text[..<index], (isPath(content) ? "Pa " : "Ql ") + words, text[text.index(after: close)...])
            }
            let atWordStart = index == text.startIndex || text[text.index(before: index)].isWhitespace
                || "([".contains(text[text.index(before: index)])
            if atWordStart, !text[index].isWhitespace {
                let wordEnd = text[index...].firstIndex { $0.isWhitespace || $0 == "`" } ?? text.endIndex
                var word = text[index..<wordEnd]
                while let last = word.last, ".,;:)]?!".contains(last), !word.hasSuffix(")") || !isReference(word) { word = word.dropLast() }
                if isPath(String(word)) {
                    return (text[..<index], "Pa " + escapedArgument(String(word)), text[word.endIndex...])
                }
                if isReference(word), let open = word.lastIndex(of: "(") {
                    let section = word[word.index(after: open)..<word.index(before: word.endIndex)]
                    return (text[..<index], "Xr \(word[..<open]) \(section)", text[word.endIndex...])
                }
            }
            index = text.index(after: index)
        }
        return nil
    }

    /// `~/.config/clickaway`, `/usr/share`, `$XDG_RUNTIME_DIR/clickaway/ctl.sock`, `conf.d/*.toml`, `config.toml`.
    private static func isPath(_ word: String) -> Bool {
        guard !word.contains(" " as Character), !word.hasPrefix("-") else { return false }
        if word.hasSuffix(".toml"), word.first?.isLetter == true { return true }
        guard word.contains("/" as Character) else { return false }
        return word.hasPrefix("~/") || (word.hasPrefix("/") && word.count > 1) || word.hasPrefix("$") || word.hasPrefix("conf.d/")
    }

    /// `clickaway.toml(5)`.
    /// `[a-z][a-z0-9.+-]*\([1-9]\)`, read by hand: a regex would link the regex runtime.
    private static func isReference(_ word: Substring) -> Bool {
        let scalars = Array(word.unicodeScalars)
        guard scalars.count >= 4, ("a"..."z").contains(scalars[0]), scalars[scalars.count - 1] == ")",
              ("1"..."9").contains(scalars[scalars.count - 2]), scalars[scalars.count - 3] == "(" else { return false }
        return scalars[1..<(scalars.count - 3)].allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || ".+-".unicodeScalars.contains($0) }
    }

    /// A text line: backslashes escaped, and a leading dot or quote kept from reading as a request.
    private static func text(_ line: String) -> String {
        var escaped = ""
        for character in line {
            if character == "\\" { escaped += "\\e" } else { escaped.append(character) }
        }
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }

    /// A macro argument that mdoc would take for a macro (`Ar`, `No`, `Op`...) or a
    /// delimiter is escaped with `\&`.
    private static func escapedArgument(_ word: String) -> String {
        let characters = Array(word)
        let macroLike = (2...3).contains(characters.count) && characters[0].isUppercase && characters.dropFirst().allSatisfy(\.isLowercase)
        let delimiter = characters.count == 1 && ".,;:()[]?!|".contains(characters[0])
        return macroLike || delimiter ? "\\&" + text(word) : text(word)
    }

    /// NAME's description: the abstract without its final period.
    private static func sentence(_ abstract: String) -> String {
        abstract.hasSuffix(".") ? String(abstract.dropLast()) : abstract
    }
}

extension String {
    /// `"` in a macro argument, which would end or start a quoted one.
    fileprivate var replacingQuotes: String { replacingEach("\"", with: "\\(dq") }

    /// Every `character` replaced by `replacement` (String's `replacing` links the regex runtime).
    fileprivate func replacingEach(_ character: Character, with replacement: String) -> String {
        var result = ""
        for c in self {
            if c == character { result += replacement } else { result.append(c) }
        }
        return result
    }

    fileprivate func trimmingCharacters(in set: Character) -> String {
        String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
    }
}
