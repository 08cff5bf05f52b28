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

    /// Negotiates the RandR version; reading the outputs needs 1.3 (`sendScreenResources`).
    /// Without RandR no RandR request may be sent: libxcb would close the connection.
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

    /// The screen's outputs (GetScreenResourcesCurrent, which does not make the server
    /// re-probe the hardware as GetScreenResources does; RandR 1.3).
    public func sendScreenResources() -> PendingReply<ScreenResources> {
        let cookie = xcb_randr_get_screen_resources_current(c, root)
        return PendingReply(sequence: cookie.sequence, request: "RRGetScreenResourcesCurrent") { raw in
            let r = raw.assumingMemoryBound(to: xcb_randr_get_screen_resources_current_reply_t.self)
            return ScreenResources(
                outputs: Array(UnsafeBufferPointer(start: xcb_randr_get_screen_resources_current_outputs(r),
                                                   count: Int(xcb_randr_get_screen_resources_current_outputs_length(r)))),
                timestamp: r.pointee.config_timestamp)
        }
    }

    public func sendOutputInfo(_ output: UInt32, at timestamp: UInt32) -> PendingReply<OutputInfo> {
        let cookie = xcb_randr_get_output_info(c, output, timestamp)
        return PendingReply(sequence: cookie.sequence, request: "RRGetOutputInfo") { raw in
            let r = raw.assumingMemoryBound(to: xcb_randr_get_output_info_reply_t.self)
            let name = UnsafeBufferPointer(start: xcb_randr_get_output_info_name(r), count: Int(xcb_randr_get_output_info_name_length(r)))
            return OutputInfo(name: String(decoding: name, as: UTF8.self), crtc: r.pointee.crtc)
        }
    }

    /// Where a CRTC shows on the root window.
    public func sendCrtcRect(_ crtc: UInt32, at timestamp: UInt32) -> PendingReply<Rect> {
        let cookie = xcb_randr_get_crtc_info(c, crtc, timestamp)
        return PendingReply(sequence: cookie.sequence, request: "RRGetCrtcInfo") { raw in
            let r = raw.assumingMemoryBound(to: xcb_randr_get_crtc_info_reply_t.self).pointee
            return Rect(x: Int32(r.x), y: Int32(r.y), width: Int32(r.width), height: Int32(r.height))
        }
    }

    /// Asks for `.randrScreenChange` events when the screen's size or layout changes.
    public func selectRandrScreenChange(_ window: WindowID) -> CheckedCookie {
        let cookie = xcb_randr_select_input_checked(c, window, UInt16(XCB_RANDR_NOTIFY_MASK_SCREEN_CHANGE.rawValue))
        return CheckedCookie(sequence: cookie.sequence)
    }
}

/// The screen's outputs, and the time of its configuration that output and CRTC requests name.
public struct ScreenResources: Sendable {
    public let outputs: [UInt32]
    public let timestamp: UInt32
}

/// An output's name and its CRTC (0 when it shows nothing).
public struct OutputInfo: Sendable {
    public let name: String
    public let crtc: UInt32

    public var isActive: Bool { crtc != 0 }

    /// The active outputs by name, with their CRTCs' rectangles in the same order.
    public static func rectangles(_ active: [OutputInfo], _ rects: [Rect]) -> [String: Rect] {
        Dictionary(zip(active.map(\.name), rects), uniquingKeysWith: { first, _ in first })
    }
}
