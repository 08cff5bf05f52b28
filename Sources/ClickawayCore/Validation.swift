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
    public static func problems(popups: [PopupSpec]) -> [ModelProblem] {
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
        for (i, p) in popups.enumerated() {
            let path = ModelPath([.popup(index: i, name: p.name)])
            if let parent = p.parent {
                if parent == p.name {
                    problems.append(ModelProblem(path: path.appending(.key("parent")),
                                                 message: "a popup cannot be its own parent"))
                } else if byName[parent] == nil {
                    problems.append(ModelProblem(
                        path: path.appending(.key("parent")),
                        message: "unknown parent \"\(parent)\"" + suggestion(parent, Array(byName.keys))))
                }
            }
            checkRegionNames(p.regions, path: path, problems: &problems)
        }
        problems += cycleProblems(popups: popups, byName: byName)
        // Redirects are resolved against the complete tree, so every name must be known first.
        let index = RegionPathIndex(popups: popups)
        for (i, p) in popups.enumerated() {
            let path = ModelPath([.popup(index: i, name: p.name)])
            if let r = p.redirect, index.resolve(r, from: p.name) == nil {
                problems.append(ModelProblem(path: path.appending(.key("redirect")),
                                             message: index.unknownMessage(r, from: p.name)))
            }
            checkRedirects(p.regions, popup: p.name, path: path, index: index, problems: &problems)
        }
        return problems
    }

    private static func checkRegionNames(_ regions: [RegionSpec], path: ModelPath, problems: inout [ModelProblem]) {
        var seen: Set<String> = []
        for (i, r) in regions.enumerated() {
            let rp = path.appending(.region(index: i, name: r.name))
            if let n = r.name {
                if !seen.insert(n).inserted {
                    problems.append(ModelProblem(path: rp.appending(.key("name")),
                                                 message: "duplicate region name \"\(n)\" among its siblings"))
                }
            }
            checkRegionNames(r.children, path: rp, problems: &problems)
        }
    }

    private static func checkRedirects(_ regions: [RegionSpec], popup: String, path: ModelPath,
                                       index: RegionPathIndex, problems: inout [ModelProblem]) {
        for (i, r) in regions.enumerated() {
            let rp = path.appending(.region(index: i, name: r.name))
            if let target = r.redirect, index.resolve(target, from: popup) == nil {
                problems.append(ModelProblem(path: rp.appending(.key("redirect")),
                                             message: index.unknownMessage(target, from: popup)))
            }
            checkRedirects(r.children, popup: popup, path: rp, index: index, problems: &problems)
        }
    }

    private static func cycleProblems(popups: [PopupSpec], byName: [String: Int]) -> [ModelProblem] {
        var problems: [ModelProblem] = []
        var reported: Set<Int> = []
        for start in popups.indices {
            var chain = [start]
            var current = start
            while let parent = popups[current].parent, let next = byName[parent], next != current {
                if let loopStart = chain.firstIndex(of: next) {
                    let loop = Array(chain[loopStart...])
                    if reported.isDisjoint(with: loop) {
                        reported.formUnion(loop)
                        let names = (loop + [next]).map { "\"\(popups[$0].name)\"" }.joined(separator: " → ")
                        problems.append(ModelProblem(
                            path: ModelPath([.popup(index: next, name: popups[next].name), .key("parent")]),
                            message: "parent cycle: \(names)"))
                    }
                    break
                }
                chain.append(next)
                current = next
            }
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

/// `; did you mean "x"?` when one candidate is close enough to be a likely typo.
public func suggestion(_ word: String, _ candidates: [String]) -> String {
    guard let best = closest(word, candidates) else { return "" }
    return "; did you mean \"\(best)\"?"
}

public func closest(_ word: String, _ candidates: [String]) -> String? {
    var best: (String, Int)?
    for c in candidates.sorted() {
        let d = editDistance(word.lowercased(), c.lowercased())
        let limit = max(1, min(word.count, c.count) / 3)
        if d <= limit, best == nil || d < best!.1 { best = (c, d) }
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
