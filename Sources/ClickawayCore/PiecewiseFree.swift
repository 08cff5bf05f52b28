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
    /// Empties the dictionary: its entries are first copied to an array a piece at a time, so
    /// that dropping the table only counts references down, then freed from there.
    mutating func removeAllInPieces(_ pause: () -> Void) {
        var entries: [Element] = []
        entries.reserveCapacity(count)
        var index = startIndex
        while index != endIndex {
            for _ in 0..<freedPerPiece where index != endIndex {
                entries.append(self[index])
                formIndex(after: &index)
            }
            pause()
        }
        self = [:]
        pause()
        entries.removeAllInPieces(pause)
    }
}
