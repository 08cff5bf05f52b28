@testable import ClickawayCore
import Testing

/// A replaced model is freed a piece at a time, with a pause between pieces, so that the
/// loader's thread never runs long without one.
@Suite struct PiecewiseFreeTests {
    final class Token {}

    static func windowPopups(_ count: Int) -> [PopupSpec] {
        (0..<count).map { PopupSpec(name: "popup-with-a-long-name-\($0)", source: .window(WindowMatch(windowClass: "Class-of-window-\($0)"))) }
    }

    @Test func anArrayIsEmptiedAPieceAtATime() {
        var tokens = (0..<3000).map { _ in Token() }
        weak var first = tokens[0], last = tokens[2999]
        var pauses = 0, lastGoneAfter = -1
        tokens.removeAllInPieces {
            pauses += 1
            if last == nil && lastGoneAfter < 0 { lastGoneAfter = pauses }
        }
        #expect(tokens.isEmpty)
        #expect(pauses == 3, "3,000 elements in pieces of \(freedPerPiece): \(pauses) pauses")
        #expect(lastGoneAfter == 1, "the last element was freed in the first piece")
        #expect(first == nil)
    }

    @Test func aDictionaryIsEmptiedAPieceAtATime() {
        var table: [Int: Token] = [:]
        for i in 0..<3000 { table[i] = Token() }
        weak var one = table[7]
        var pauses = 0, aliveAtEachPause: [Bool] = []
        table.removeAllInPieces {
            pauses += 1
            aliveAtEachPause.append(one != nil)
        }
        #expect(table.isEmpty)
        // Three pieces of keys copied out, three pieces of entries removed.
        #expect(pauses == 6, "\(pauses) pauses")
        #expect(aliveAtEachPause.prefix(3).allSatisfy { $0 }, "an entry was freed before the removals")
        #expect(aliveAtEachPause.filter { !$0 }.count >= 1, "the entry was not freed in a piece")
        #expect(one == nil)
    }

    @Test func aModelHeldOnlyHereIsFreedInPieces() throws {
        weak var gone: ClickModel?
        var pauses = 0
        do {
            var model: ClickModel? = try ClickModel(popups: Self.windowPopups(5000))
            gone = model
            ClickModel.free(model.take()!) { pauses += 1 }
        }
        #expect(gone == nil)
        // Popups, window matches, names and the class index: 5 pieces each, and more.
        #expect(pauses >= 20, "\(pauses) pauses for a model of 5,000 popups")
    }

    @Test func aModelHeldElsewhereIsOnlyLetGo() throws {
        let model = try ClickModel(popups: Self.windowPopups(2000))
        var pauses = 0
        ClickModel.free(model) { pauses += 1 }
        #expect(pauses == 0)
        #expect(model.popupIndex(named: "popup-with-a-long-name-1999") == 1999)
        #expect(model.popups.count == 2000)
    }
}
