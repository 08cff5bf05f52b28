@testable import ClickawayDaemon
import ClickawayCore
import ClickawayX11
import Testing

/// What the X11 display computes without a server: lock combinations and button masks.
@Suite struct X11PartsTests {
    @Test func everyUnionOfTheLockModifiersIsGrabbed() {
        let locks = LockModifiers(numLock: .mod2, scrollLock: .mod5)
        #expect(locks.combinations.count == 8)
        #expect(Set(locks.combinations.map(\.rawValue)).count == 8)
        #expect(locks.combinations.first == [])
        #expect(locks.combinations.contains([.mod2, .lock, .mod5]))
        #expect(locks.combinations.map(\.rawValue) == locks.combinations.map(\.rawValue).sorted())
        #expect(locks.describe([]) == "no modifiers")
        #expect(locks.describe([.mod2, .lock]) == "NumLock+CapsLock")
        #expect(locks.describe(.mod5) == "ScrollLock")
    }

    @Test func aLockKeyTheKeyboardLacksIsLeftOut() {
        let locks = LockModifiers(numLock: .mod2, scrollLock: [])
        #expect(locks.combinations == [[], .lock, .mod2, [.lock, .mod2]])
        #expect(locks.describe(.mod5) == "no modifiers")
        // NumLock and ScrollLock on the same bit (a few maps): no duplicate combinations.
        #expect(LockModifiers(numLock: .mod2, scrollLock: .mod2).combinations.count == 4)
    }

    /// What `X11Display` asks of a release: was another button still held?
    static func othersHeld(_ button: UInt8, state: ModifierMask) -> Bool {
        ButtonEvent.otherButtonsHeld(releasing: button, state: state)
    }

    @Test func buttonMasksAreTheStateBitsOfButtonsOneToFive() {
        #expect(ModifierMask.buttons.rawValue == 0x1F00)
        #expect((1...5).map { ModifierMask.button($0).rawValue } == [0x100, 0x200, 0x400, 0x800, 0x1000])
        #expect(ModifierMask.button(0).isEmpty && ModifierMask.button(6).isEmpty && ModifierMask.button(255).isEmpty)
    }

    @Test func otherButtonsHeldLooksAtEveryButtonButTheOneReleased() {
        #expect(!Self.othersHeld(1, state: .button(1)))
        #expect(Self.othersHeld(1, state: [.button(1), .button(3)]))
        #expect(!Self.othersHeld(3, state: [.button(3), .mod2, .lock]))
        #expect(Self.othersHeld(3, state: .button(5)))
        // Buttons above 5 have no bit of their own: only buttons 1-5 count as held.
        #expect(!Self.othersHeld(8, state: []))
        #expect(Self.othersHeld(8, state: .button(2)))
    }

    /// A new model places only the windows its new matches can take: what they are.
    @Test func addedMatchesAreThoseBetweenTheCommonBeginningAndEnd() throws {
        let a = WindowMatch(windowClass: "A"), b = WindowMatch(windowClass: "B"), c = WindowMatch(windowClass: "C")
        let pid = WindowMatch(pid: 42), excluded = WindowMatch(windowClass: "Keyboard")
        func added(_ old: [WindowMatch], _ new: [WindowMatch]) throws -> [WindowMatch] {
            func model(_ matches: [WindowMatch]) throws -> ClickModel {
                try ClickModel(popups: matches.enumerated().map { PopupSpec(name: "p\($0.offset)", source: .window($0.element)) })
            }
            let newModel = try model(new)
            return WindowTracker.addedMatches(from: try model(old), to: newModel).map { newModel.windowMatches[$0] }
        }
        #expect(try added([a, b, excluded], [a, b, excluded]).isEmpty)
        // A runtime popup comes after the configured ones, before the exclusions.
        #expect(try added([a, b, excluded], [a, b, pid, excluded]) == [pid])
        #expect(try added([a, b, pid, excluded], [a, b, excluded]).isEmpty)
        // One edited; one moved is not new.
        #expect(try added([a, b, excluded], [a, c, excluded]) == [c])
        #expect(try added([a, b, c], [c, b, a]).isEmpty)
        #expect(try added([], [a, a]) == [a, a])
        #expect(try added([a], [a, a]) == [a])
    }
}
