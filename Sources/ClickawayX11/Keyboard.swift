internal import CXCB

/// Keysyms of the lock keys whose modifier bits vary between keyboard maps.
public enum Keysym {
    public static let numLock: UInt32 = 0xff7f
    public static let scrollLock: UInt32 = 0xff14
    public static let escape: UInt32 = 0xff1b
}

extension XConnection {
    /// The keycodes that produce `keysym` in any column of the keyboard map.
    public func keycodes(forKeysym keysym: UInt32) throws(XError) -> Set<UInt8> {
        let setup = xcb_get_setup(c)!.pointee
        let cookie = xcb_get_keyboard_mapping(c, setup.min_keycode, setup.max_keycode - setup.min_keycode + 1)
        return try reply("GetKeyboardMapping", { xcb_get_keyboard_mapping_reply(c, cookie, $0) }) { r in
            let perKeycode = Int(r.pointee.keysyms_per_keycode)
            let keysyms = UnsafeBufferPointer(start: xcb_get_keyboard_mapping_keysyms(r),
                                              count: Int(xcb_get_keyboard_mapping_keysyms_length(r)))
            guard perKeycode > 0 else { return [] }
            var found: Set<UInt8> = []
            for (index, sym) in keysyms.enumerated() where sym == keysym {
                found.insert(setup.min_keycode &+ UInt8(index / perKeycode))
            }
            return found
        }
    }

    /// The modifier bit that a key producing `keysym` sets (Mod2 for NumLock on most maps),
    /// or an empty mask when no modifier has such a key. A passive grab matches modifiers
    /// exactly, so the daemon grabs once per combination of these lock bits.
    public func modifierMask(forKeysym keysym: UInt32) throws(XError) -> ModifierMask {
        let keycodes = try keycodes(forKeysym: keysym)
        let cookie = xcb_get_modifier_mapping(c)
        let modifierKeycodes = try reply("GetModifierMapping", { xcb_get_modifier_mapping_reply(c, cookie, $0) }) { r in
            (perModifier: Int(r.pointee.keycodes_per_modifier),
             codes: Array(UnsafeBufferPointer(start: xcb_get_modifier_mapping_keycodes(r),
                                              count: Int(xcb_get_modifier_mapping_keycodes_length(r)))))
        }
        // The modifier map lists `perModifier` keycodes for each of the 8 modifiers in bit order.
        var mask: UInt16 = 0
        for (index, code) in modifierKeycodes.codes.enumerated() where code != 0 && keycodes.contains(code) {
            mask |= 1 << UInt16(index / max(modifierKeycodes.perModifier, 1))
        }
        return ModifierMask(rawValue: mask)
    }
}
