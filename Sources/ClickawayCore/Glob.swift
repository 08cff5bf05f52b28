/// Shell-style glob matching on Unicode scalars: `*`, `?`, `[abc]`, `[a-z]`, `[!x]`, `\x`.
public enum Glob {
    public static func matches(_ pattern: String, _ text: String) -> Bool {
        match(Array(pattern.unicodeScalars), 0, Array(text.unicodeScalars), 0)
    }

    private static func match(_ p: [Unicode.Scalar], _ pi: Int, _ t: [Unicode.Scalar], _ ti: Int) -> Bool {
        var pi = pi, ti = ti
        // Backtracking point for the most recent `*`: linear in practice, no recursion blow-up.
        var starP = -1, starT = -1
        while ti < t.count {
            if pi < p.count {
                switch p[pi] {
                case "*":
                    starP = pi
                    starT = ti
                    pi += 1
                    continue
                case "?":
                    pi += 1
                    ti += 1
                    continue
                case "[":
                    if let (ok, next) = matchClass(p, pi, t[ti]) {
                        if ok {
                            pi = next
                            ti += 1
                            continue
                        }
                    } else if t[ti] == "[" {
                        pi += 1
                        ti += 1
                        continue
                    }
                case "\\" where pi + 1 < p.count:
                    if p[pi + 1] == t[ti] {
                        pi += 2
                        ti += 1
                        continue
                    }
                default:
                    if p[pi] == t[ti] {
                        pi += 1
                        ti += 1
                        continue
                    }
                }
            }
            guard starP >= 0 else { return false }
            pi = starP + 1
            starT += 1
            ti = starT
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }

    /// Matches `c` against the bracket expression at `p[start]`; nil when the bracket is unterminated.
    private static func matchClass(_ p: [Unicode.Scalar], _ start: Int, _ c: Unicode.Scalar) -> (Bool, Int)? {
        var i = start + 1
        var negate = false
        if i < p.count, p[i] == "!" || p[i] == "^" {
            negate = true
            i += 1
        }
        var matched = false
        var first = true
        while i < p.count {
            if p[i] == "]" && !first { return (matched != negate, i + 1) }
            first = false
            let lo = p[i]
            if i + 2 < p.count, p[i + 1] == "-", p[i + 2] != "]" {
                if lo.value <= c.value && c.value <= p[i + 2].value { matched = true }
                i += 3
            } else {
                if lo == c { matched = true }
                i += 1
            }
        }
        return nil
    }
}
