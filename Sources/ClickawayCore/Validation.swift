/// Where in the configuration a problem is: the steps from the top of the file to the key.
/// Indices are positions in the TOML arrays, so the config layer can find the line.
public enum PathStep: Hashable, Sendable {
    case popup(index: Int, name: String)
    case region(index: Int, name: String?)
    case anchor(index: Int)
    case exclude(index: Int)
    case table(String)
    case key(String)
}

public struct ModelPath: Hashable, Sendable, CustomStringConvertible {
    public var steps: [PathStep]
    public init(_ steps: [PathStep] = []) { self.steps = steps }
    public func appending(_ step: PathStep) -> ModelPath { ModelPath(steps + [step]) }

    /// `popup "calendar" → region "card" → rect`
    public var description: String {
        steps.map { step -> String in
            switch step {
            case .popup(_, let name): return "popup \"\(name)\""
            case .region(let i, let name): return name.map { "region \"\($0)\"" } ?? "region #\(i + 1)"
            case .anchor(let i): return "anchor #\(i + 1)"
            case .exclude(let i): return "exclude #\(i + 1)"
            case .table(let t): return t
            case .key(let k): return k
            }
        }.joined(separator: " → ")
    }
}

public struct ModelProblem: Hashable, Sendable, CustomStringConvertible {
    public var path: ModelPath
    public var message: String
    public init(path: ModelPath, message: String) {
        self.path = path
        self.message = message
    }
    public var description: String { "\(path): \(message)" }
}

/// Checks the references between popups that only make sense across the whole config:
/// unique names, parents that exist and do not loop, redirect targets that exist.
public enum ModelValidator {
    /// At most `limit` problems: past that, a report is no more useful and costs more to make.
    public static func problems(popups: [PopupSpec], limit: Int = 200) -> [ModelProblem] {
        Array(allProblems(popups: popups, limit: limit).prefix(limit))
    }

    private static func allProblems(popups: [PopupSpec], limit: Int) -> [ModelProblem] {
        var problems: [ModelProblem] = []
        var byName: [String: Int] = [:]
        for (i, p) in popups.enumerated() {
            let path = ModelPath([.popup(index: i, name: p.name)])
            if let first = byName[p.name] {
                problems.append(ModelProblem(
                    path: path.appending(.key("name")),
                    message: "duplicate popup name \"\(p.name)\" (first used by popup #\(first + 1))"))
            } else {
                byName[p.name] = i
            }
        }
        // The names an unknown parent may be a typo of, listed at the first one.
        lazy var names = byName.count <= suggestionCandidatesLimit ? Array(byName.keys) : []
        for (i, p) in popups.enumerated() {
            if problems.count >= limit { return problems }
            let path = ModelPath([.popup(index: i, name: p.name)])
            if let parent = p.parent {
                if parent == p.name {
                    problems.append(ModelProblem(path: path.appending(.key("parent")),
                                                 message: "a popup cannot be its own parent"))
                } else if byName[parent] == nil {
                    problems.append(ModelProblem(
                        path: path.appending(.key("parent")),
                        message: "unknown parent \"\(parent)\"" + suggestion(parent, names)))
                }
            }
            checkRegionNames(p.regions, path: path, problems: &problems)
        }
        problems += cycleProblems(popups: popups, byName: byName)
        // Redirects are resolved against the complete tree, so every name must be known first.
        guard popups.contains(where: { $0.redirect != nil || RegionSpec.anyRedirect($0.regions) }) else { return problems }
        let index = RegionPathIndex(popups: popups)
        for (i, p) in popups.enumerated() {
            if problems.count >= limit { return problems }
            let path = ModelPath([.popup(index: i, name: p.name)])
            if let r = p.redirect, index.resolve(r, from: p.name) == nil {
                problems.append(ModelProblem(path: path.appending(.key("redirect")),
                                             message: index.unknownMessage(r, from: p.name)))
            }
            checkRedirects(p.regions, popup: p.name, path: path, index: index, limit: limit, problems: &problems)
        }
        return problems
    }

    /// The problems of `added` placed after `base`'s popups, which have none: each added
    /// popup is checked against the base's names, and the base is not walked again (a
    /// runtime popup beside a configuration of 66,000). Base popups never name an added one
    /// as parent, so a parent loop can only run through added popups.
    public static func problems(adding added: [PopupSpec], to base: ClickModel, limit: Int = 200) -> [ModelProblem] {
        if added.contains(where: { $0.redirect != nil || RegionSpec.anyRedirect($0.regions) }) {
            // A redirect may name any region of any popup: resolved against the whole tree.
            return problems(popups: base.popups + added, limit: limit)
        }
        var problems: [ModelProblem] = []
        var byName: [String: Int] = [:]
        for (k, p) in added.enumerated() where problems.count < limit {
            let i = base.popups.count + k
            let path = ModelPath([.popup(index: i, name: p.name)])
            if let first = base.popupIndex(named: p.name).map(Int.init) ?? byName[p.name] {
                problems.append(ModelProblem(
                    path: path.appending(.key("name")),
                    message: "duplicate popup name \"\(p.name)\" (first used by popup #\(first + 1))"))
            } else {
                byName[p.name] = i
            }
            if let parent = p.parent {
                if parent == p.name {
                    problems.append(ModelProblem(path: path.appending(.key("parent")), message: "a popup cannot be its own parent"))
                } else if base.popupIndex(named: parent) == nil && !added.contains(where: { $0.name == parent }) {
                    problems.append(ModelProblem(path: path.appending(.key("parent")), message: "unknown parent \"\(parent)\""))
                }
            }
            checkRegionNames(p.regions, path: path, problems: &problems)
        }
        // A parent named in the base ends a chain there, as the first popup of a name wins.
        var addedByName: [String: Int] = [:]
        for (k, p) in added.enumerated() where base.popupIndex(named: p.name) == nil && addedByName[p.name] == nil {
            addedByName[p.name] = k
        }
        for problem in cycleProblems(popups: added, byName: addedByName) {
            // Positions among the added popups, as the whole list numbers them.
            var shifted = problem
            if case .popup(let index, let name) = shifted.path.steps[0] {
                shifted.path.steps[0] = .popup(index: base.popups.count + index, name: name)
            }
            problems.append(shifted)
        }
        return Array(problems.prefix(limit))
    }

    private static func checkRegionNames(_ regions: [RegionSpec], path: ModelPath, problems: inout [ModelProblem]) {
        var seen: Set<String> = []
        for (i, r) in regions.enumerated() {
            var regionPath: ModelPath { path.appending(.region(index: i, name: r.name)) }
            if let n = r.name, regions.count > 1 {
                // A few siblings are compared in turn; many are hashed.
                let duplicate = regions.count <= 8 ? regions[..<i].contains { $0.name == n } : !seen.insert(n).inserted
                if duplicate {
                    problems.append(ModelProblem(path: regionPath.appending(.key("name")),
                                                 message: "duplicate region name \"\(n)\" among its siblings"))
                }
            }
            if !r.children.isEmpty { checkRegionNames(r.children, path: regionPath, problems: &problems) }
        }
    }

    private static func checkRedirects(_ regions: [RegionSpec], popup: String, path: ModelPath,
                                       index: RegionPathIndex, limit: Int, problems: inout [ModelProblem]) {
        for (i, r) in regions.enumerated() where problems.count < limit {
            let rp = path.appending(.region(index: i, name: r.name))
            if let target = r.redirect, index.resolve(target, from: popup) == nil {
                problems.append(ModelProblem(path: rp.appending(.key("redirect")),
                                             message: index.unknownMessage(target, from: popup)))
            }
            checkRedirects(r.children, popup: popup, path: rp, index: index, limit: limit, problems: &problems)
        }
    }

    /// Every parent loop, once: each popup is walked at most once (linear in the popups).
    private static func cycleProblems(popups: [PopupSpec], byName: [String: Int]) -> [ModelProblem] {
        var problems: [ModelProblem] = []
        // 0: not seen; 1: on the chain being walked (its position in `positionOnChain`); 2: done.
        var state = [UInt8](repeating: 0, count: popups.count)
        var positionOnChain = [Int](repeating: 0, count: popups.count)
        for start in popups.indices where state[start] == 0 {
            var chain: [Int] = []
            var current = start
            while true {
                state[current] = 1
                positionOnChain[current] = chain.count
                chain.append(current)
                guard let parent = popups[current].parent, let next = byName[parent], next != current else { break }
                if state[next] == 1 {
                    let loop = Array(chain[positionOnChain[next]...])
                    let names = (loop + [next]).map { "\"\(popups[$0].name)\"" }.joined(separator: " → ")
                    problems.append(ModelProblem(
                        path: ModelPath([.popup(index: next, name: popups[next].name), .key("parent")]),
                        message: "parent cycle: \(names)"))
                    break
                }
                if state[next] == 2 { break }
                current = next
            }
            for i in chain { state[i] = 2 }
        }
        return problems
    }
}

/// Resolves `popup.region.path` and `region.path` references to region paths.
struct RegionPathIndex {
    /// Dotted full paths ("calendar.card.day") of every named region, and every popup name.
    private(set) var known: Set<String> = []
    private var popupNames: Set<String> = []

    init(popups: [PopupSpec]) {
        for p in popups {
            popupNames.insert(p.name)
            known.insert(p.name)
            add(p.regions, prefix: p.name)
        }
    }

    private mutating func add(_ regions: [RegionSpec], prefix: String) {
        for r in regions {
            guard let n = r.name else { continue }
            let full = prefix + "." + n
            known.insert(full)
            add(r.children, prefix: full)
        }
    }

    /// A target names a region of the same popup first ("card.day"), else a full path ("calendar.card").
    func resolve(_ target: String, from popup: String) -> String? {
        let local = popup + "." + target
        if known.contains(local) { return local }
        if known.contains(target) { return target }
        return nil
    }

    func unknownMessage(_ target: String, from popup: String) -> String {
        let candidates = known.map { $0.hasPrefix(popup + ".") ? String($0.dropFirst(popup.count + 1)) : $0 }
        return "unknown redirect target \"\(target)\"" + suggestion(target, candidates)
            + " (write \"region\" for a region of this popup or \"popup.region\" for another popup's)"
    }
}

/// The most names a did-you-mean looks among: past it none is offered. Each looks at every
/// name, and a file may make an error of every popup (4 MiB of unknown parents among 61,000
/// popups took 1.3 s to check; one name among 74,000 took 53 ms on the daemon's loop).
public let suggestionCandidatesLimit = 2_000

/// `; did you mean "x"?` when one candidate is close enough to be a likely typo.
public func suggestion(_ word: String, _ candidates: [String]) -> String {
    guard let best = closest(word, candidates) else { return "" }
    return "; did you mean \"\(best)\"?"
}

/// The closest candidate within a third of the shorter word's length (ties: the first by
/// name). Linear in the candidates: words whose lengths alone rule them out are not compared.
public func closest(_ word: String, _ candidates: [String]) -> String? {
    // A typo is short; comparing long words would cost their lengths multiplied.
    let longest = 64
    guard word.utf8.count <= longest else { return nil }
    let lowered = word.lowercased(), length = word.count
    var best: (String, Int)?
    for c in candidates where c.utf8.count <= longest {
        let limit = max(1, min(length, c.count) / 3)
        guard abs(length - c.count) <= limit else { continue }
        let d = editDistance(lowered, c.lowercased())
        if d <= limit, best == nil || d < best!.1 || (d == best!.1 && c < best!.0) { best = (c, d) }
    }
    return best?.0
}

func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var prev = Array(0...b.count)
    var cur = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        cur[0] = i
        for j in 1...b.count {
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&prev, &cur)
    }
    return prev[b.count]
}

/// `[A-Za-z0-9_-]+`: popup names appear in redirect paths (`popup.region`) and on command lines.
public func isValidPopupName(_ name: String) -> Bool {
    !name.isEmpty && name.unicodeScalars.allSatisfy {
        ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-"
    }
}
