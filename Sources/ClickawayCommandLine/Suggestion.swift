/// "did you mean": the candidate a mistyped word most likely meant, if one is close enough.
enum Suggestion {
    /// The closest candidate within a third of the shorter word's length (at least 1), counting
    /// a swap of two neighbouring letters as one edit (`stauts` → `status`); ties go to the
    /// first candidate. Dashes in front are not compared: `--colr` → `--color`.
    static func closest(_ word: String, _ candidates: [String]) -> String? {
        let bare = Array(word.drop { $0 == "-" }.lowercased())
        guard !bare.isEmpty, bare.count <= 64 else { return nil }
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let other = Array(candidate.drop { $0 == "-" }.lowercased())
            let limit = max(1, min(bare.count, other.count) / 3)
            guard abs(bare.count - other.count) <= limit else { continue }
            let distance = editDistance(bare, other)
            if distance <= limit, distance < best?.distance ?? .max { best = (candidate, distance) }
        }
        return best?.candidate
    }

    /// `; did you mean 'status'?`, or nothing.
    static func phrase(_ word: String, _ candidates: [String]) -> String {
        closest(word, candidates).map { "; did you mean '\($0)'?" } ?? ""
    }

    /// Insertions, deletions, substitutions and swaps of neighbours (optimal string alignment).
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
