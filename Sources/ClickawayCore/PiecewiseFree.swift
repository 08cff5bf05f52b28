/// Freeing big collections a piece at a time, `pause()` after each piece: Swift frees a
/// value's parts in one go, and the loader's thread, freeing a replaced model of 74,000
/// popups, would otherwise run for milliseconds with no pause (`ClickModel.free`).

/// Elements destroyed between two pauses.
let freedPerPiece = 1024

extension Array {
    /// Empties the array from its end. Storage shared with another array (not expected here)
    /// costs one copy of it.
    mutating func removeAllInPieces(_ pause: () -> Void) {
        while !isEmpty {
            removeLast(Swift.min(count, freedPerPiece))
            pause()
        }
    }
}

extension Dictionary {
    /// Empties the dictionary: its keys are first copied out a piece at a time, then its
    /// entries removed a piece at a time (a dictionary never shrinks as it empties), so that
    /// the empty table left is freed at once.
    mutating func removeAllInPieces(_ pause: () -> Void) {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        var index = startIndex
        while index != endIndex {
            for _ in 0..<freedPerPiece where index != endIndex {
                keys.append(self[index].key)
                formIndex(after: &index)
            }
            pause()
        }
        while !keys.isEmpty {
            for key in keys.suffix(freedPerPiece) { removeValue(forKey: key) }
            keys.removeLast(Swift.min(keys.count, freedPerPiece))
            pause()
        }
    }
}
