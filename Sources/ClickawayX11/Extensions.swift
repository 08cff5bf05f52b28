internal import CXCB
public import ClickawayCore

public struct ExtensionInfo: Equatable, Sendable {
    public var majorOpcode: UInt8
    public var firstEvent: UInt8
    public var firstError: UInt8
}

extension XConnection {
    /// The extension's opcodes, or nil when the server does not have it.
    public func queryExtension(_ name: String) throws(XError) -> ExtensionInfo? {
        let cookie = xcb_query_extension(c, UInt16(name.utf8.count), name)
        return try reply("QueryExtension \(name)", { xcb_query_extension_reply(c, cookie, $0) }) { r in
            r.pointee.present == 0 ? nil
                : ExtensionInfo(majorOpcode: r.pointee.major_opcode, firstEvent: r.pointee.first_event,
                                firstError: r.pointee.first_error)
        }
    }

    // MARK: XFixes

    /// Negotiates the XFixes version. The protocol requires this before any other XFixes
    /// request; shield mode needs 2.0 for regions and input shapes.
    @discardableResult
    public func requireXFixes(_ needed: Version = Version(2, 0)) throws(XError) -> Version {
        // libxcb caches this answer and addresses every XFixes request with it.
        // NULL only when the connection broke.
        guard let xfixes = xcb_get_extension_data(c, cxcb_xfixes_id())?.pointee else {
            throw connectionError ?? .connectionLost(reason: connectionErrorReason(XCB_CONN_ERROR))
        }
        guard xfixes.present != 0 else { throw .missingExtension("XFIXES") }
        // Offer the newest version libxcb knows; the server answers with what both support.
        let cookie = xcb_xfixes_query_version(c, UInt32(XCB_XFIXES_MAJOR_VERSION), UInt32(XCB_XFIXES_MINOR_VERSION))
        let have = try reply("XFixesQueryVersion", { xcb_xfixes_query_version_reply(c, cookie, $0) }) { r in
            Version(r.pointee.major_version, r.pointee.minor_version)
        }
        guard have >= needed else { throw .extensionTooOld("XFIXES", have: have, need: needed) }
        return have
    }

    // MARK: RandR

    /// Negotiates the RandR version; `outputs()` needs 1.3 (GetScreenResourcesCurrent,
    /// which does not make the server re-probe the hardware like GetScreenResources does).
    @discardableResult
    public func requireRandR(_ needed: Version = Version(1, 3)) throws(XError) -> Version {
        guard randrEventBase != nil else { throw .missingExtension("RANDR") }
        let cookie = xcb_randr_query_version(c, UInt32(XCB_RANDR_MAJOR_VERSION), UInt32(XCB_RANDR_MINOR_VERSION))
        let have = try reply("RRQueryVersion", { xcb_randr_query_version_reply(c, cookie, $0) }) { r in
            Version(r.pointee.major_version, r.pointee.minor_version)
        }
        guard have >= needed else { throw .extensionTooOld("RANDR", have: have, need: needed) }
        return have
    }

    /// The active outputs ("DP-1", "HDMI-A-0", Xvfb's "screen") and their rectangles on the
    /// root window. Outputs without a CRTC (disconnected or switched off) are left out.
    public func outputs() throws(XError) -> [String: Rect] {
        let resourcesCookie = xcb_randr_get_screen_resources_current(c, root)
        let (outputs, timestamp) = try reply("RRGetScreenResourcesCurrent", {
            xcb_randr_get_screen_resources_current_reply(c, resourcesCookie, $0)
        }) { r in
            (Array(UnsafeBufferPointer(start: xcb_randr_get_screen_resources_current_outputs(r),
                                       count: Int(xcb_randr_get_screen_resources_current_outputs_length(r)))),
             r.pointee.config_timestamp)
        }

        let infoCookies = outputs.map { xcb_randr_get_output_info(c, $0, timestamp) }
        let infos: [(name: String, crtc: UInt32)] = try collect(c, infoCookies, \.sequence) { (_, cookie) throws(XError) in
            try reply("RRGetOutputInfo", { xcb_randr_get_output_info_reply(c, cookie, $0) }) { r in
                let name = UnsafeBufferPointer(start: xcb_randr_get_output_info_name(r),
                                               count: Int(xcb_randr_get_output_info_name_length(r)))
                return (String(decoding: name, as: UTF8.self), r.pointee.crtc)
            }
        }

        let active = infos.filter { $0.crtc != 0 }
        let crtcCookies = active.map { xcb_randr_get_crtc_info(c, $0.crtc, timestamp) }
        let rects = try collect(c, crtcCookies, \.sequence) { (_, cookie) throws(XError) in
            try reply("RRGetCrtcInfo", { xcb_randr_get_crtc_info_reply(c, cookie, $0) }) { r in
                Rect(x: Int32(r.pointee.x), y: Int32(r.pointee.y), width: Int32(r.pointee.width), height: Int32(r.pointee.height))
            }
        }
        return Dictionary(zip(active.map(\.name), rects), uniquingKeysWith: { first, _ in first })
    }

    /// Asks for `.randrScreenChange` events when the screen's size or layout changes.
    public func selectRandrScreenChange(_ window: WindowID) -> CheckedCookie {
        let cookie = xcb_randr_select_input_checked(c, window, UInt16(XCB_RANDR_NOTIFY_MASK_SCREEN_CHANGE.rawValue))
        return CheckedCookie(sequence: cookie.sequence)
    }
}
