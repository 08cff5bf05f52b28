/// What is wrong with a command line, in the words the user typed.
struct UsageError: Error {
    let message: String
}

/// Reads the words of a command line into a command's bindings: `--name value`,
/// `--name=value`, flags, `--no-` flags, positionals in order, the words after `--`.
struct CommandLineParser {
    let bindings: Bindings
    /// Spellings the program answers before parsing (`--help`, `--version`): offered when an
    /// unknown option is close to one.
    var otherSpellings: [String] = ["--help"]

    func parse(_ words: [String]) throws(UsageError) {
        let entries = bindings.entries
        let positionals = entries.filter { $0.definition.kind == .positional }
        let afterTerminator = entries.first { $0.definition.kind == .postTerminator }
        var nextPositional = 0
        var terminated = false
        var index = 0

        func positional(_ word: String) throws(UsageError) {
            guard nextPositional < positionals.count else { throw UsageError(message: "Unexpected argument '\(word)'") }
            let entry = positionals[nextPositional]
            try take(word, into: entry)
            // A repeated one takes every word left.
            if !entry.definition.isRepeated { nextPositional += 1 }
        }

        while index < words.count {
            let word = words[index]
            index += 1
            if terminated {
                if let afterTerminator { try take(word, into: afterTerminator) } else { try positional(word) }
                continue
            }
            if word == "--" {
                terminated = true
                continue
            }
            guard Self.isOption(word) else {
                try positional(word)
                continue
            }
            let (spelling, inlineValue) = Self.split(word)
            // Only options and flags: a positional's value name (`--command` for the words
            // after `--`) is no option.
            if let entry = entries.first(where: { $0.definition.isNamed
                                                  && ($0.definition.spelling == spelling || $0.definition.shortSpelling == spelling) }) {
                if !entry.definition.takesValue {
                    guard inlineValue == nil else { throw UsageError(message: "The flag '\(spelling)' takes no value") }
                    entry.storage.set(true)
                } else if let inlineValue {
                    try take(inlineValue, into: entry)
                } else if index < words.count, !Self.isOption(words[index]) {
                    try take(words[index], into: entry)
                    index += 1
                } else {
                    throw UsageError(message: "Missing value for '\(entry.definition.synopsis)'")
                }
            } else if spelling.hasPrefix("--no-"),
                      let entry = entries.first(where: { $0.definition.kind == .flag(invertible: true)
                                                         && $0.definition.name == String(spelling.dropFirst(5)) }),
                      inlineValue == nil {
                entry.storage.set(false)
            } else {
                throw UsageError(message: "Unknown option '\(spelling)'" + Suggestion.phrase(spelling, knownSpellings))
            }
        }

        for entry in entries where !entry.definition.isOptional && !entry.storage.isGiven {
            throw UsageError(message: "Missing expected argument '\(entry.definition.synopsis)'")
        }
    }

    /// Every long spelling the command takes, for "did you mean".
    private var knownSpellings: [String] {
        bindings.entries.map(\.definition).filter(\.isNamed).flatMap { definition -> [String] in
            definition.kind == .flag(invertible: true) ? [definition.spelling, "--no-" + definition.name] : [definition.spelling]
        } + otherSpellings
    }

    private func take(_ word: String, into entry: Bindings.Entry) throws(UsageError) {
        guard entry.storage.take(word) else {
            let definition = entry.definition
            let allowed = definition.allowedValues
            let choices = allowed.isEmpty ? "" : " Please provide one of \(Self.list(allowed.map { "'\($0)'" }, and: "or"))."
            let expected = definition.expected.isEmpty || !allowed.isEmpty ? "." : ": \(definition.expected) is expected."
            throw UsageError(message: "The value '\(word)' is invalid for '\(definition.synopsis)'\(expected)\(choices)")
        }
    }

    /// `--x`, `-h`; not `-`, and not a negative number (a coordinate left of the screen).
    static func isOption(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.count > 1 else { return false }
        let second = word[word.index(after: word.startIndex)]
        return !second.isNumber
    }

    /// `--name=value` → ("--name", "value").
    private static func split(_ word: String) -> (String, String?) {
        guard let equals = word.firstIndex(of: "=") else { return (word, nil) }
        return (String(word[..<equals]), String(word[word.index(after: equals)...]))
    }

    /// "'a', 'b' or 'c'".
    static func list(_ items: [String], and conjunction: String) -> String {
        guard items.count > 1 else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " \(conjunction) " + items[items.count - 1]
    }
}
