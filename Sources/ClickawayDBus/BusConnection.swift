internal import CSystemdBus
internal import Glibc
public import SystemPackage

/// One connection to a D-Bus bus through sd-bus, driven by the caller's poll loop: what KWin
/// (its scripting, and a script's `callDBus`) speaks. Two things only: calls that wait,
/// bounded, for their reply (start-up and stop), and one exported object whose method calls
/// are handed to the owner, which may answer each at once or later (a long poll).
public final class BusConnection {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// What a call's reply carried first.
    public enum Value: Equatable, Sendable {
        case none
        case text(String)
        case number(Int64)
    }

    /// A method call to the exported object, until answered (`answer`).
    public struct Call: Sendable {
        public let member: String
        /// The first argument when it is a string.
        public let argument: String?
        /// The caller's unique name (`:1.42`).
        public let sender: String?
        let id: Int
    }

    public let address: String
    private let bus: OpaquePointer
    /// Calls to the exported object not answered yet, by `Call.id`, each holding a reference.
    private var held: [Int: OpaquePointer] = [:]
    private var nextCall = 0
    private var arrived: [Call] = []
    private var exportSlot: OpaquePointer?
    private var matchSlots: [OpaquePointer] = []
    /// A watched name's owner changed: the name and its new owner ("" when it has none).
    public struct OwnerChange: Sendable, Equatable {
        public let name: String
        public let newOwner: String
    }
    private var ownerChanges: [OwnerChange] = []
    /// Why the connection stopped working, once it has.
    public private(set) var failure: String?

    /// Connects to the bus at `address`; the handshake completes as the connection is
    /// processed (the first `call` waits for it).
    public init(address: String, description: String) throws(Failure) {
        self.address = address
        var bus: OpaquePointer?
        var missing: UnsafePointer<CChar>?
        let status = csdbus_open(address, description, &bus, &missing)
        if let missing { throw Failure("libsystemd (sd-bus) cannot be loaded: \(String(cString: missing))") }
        guard status >= 0, let bus else { throw Failure("cannot connect to the D-Bus bus at \(address): \(Self.text(status))") }
        self.bus = bus
    }

    deinit {
        for (_, call) in held { csdbus_message_unref(call) }
        if let exportSlot { csdbus_slot_unref(exportSlot) }
        for slot in matchSlots { csdbus_slot_unref(slot) }
        csdbus_close(bus)
    }

    /// The connection's unique name on the bus (`:1.42`), which a peer can call it by.
    public var uniqueName: String? {
        guard let name = csdbus_unique_name(bus) else { return nil }
        defer { free(name) }
        return String(cString: name)
    }

    public var descriptor: FileDescriptor { FileDescriptor(rawValue: csdbus_get_fd(bus)) }

    /// Whether output is queued for the socket.
    public var wantsToWrite: Bool { csdbus_get_events(bus) & Int32(POLLOUT) != 0 }

    /// Calls `member` and waits at most `milliseconds` for its reply.
    public func call(_ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [String] = [],
                     milliseconds: UInt64) throws(Failure) -> Value {
        precondition(arguments.count <= 2, "two string arguments at most")
        var text: UnsafeMutablePointer<CChar>?
        var number: Int64 = .min
        var error: UnsafeMutablePointer<CChar>?
        let first = arguments.first ?? "", second = arguments.count > 1 ? arguments[1] : ""
        let status = csdbus_call(bus, destination, path, interface, member, Int32(arguments.count), first, second,
                                 milliseconds * 1000, &text, &number, &error)
        defer {
            free(text)
            free(error)
        }
        guard status >= 0 else {
            let why = error.map { String(cString: $0) } ?? Self.text(status)
            throw Failure("\(interface).\(member) on \(destination) \(path): \(why)")
        }
        if let text { return .text(String(cString: text)) }
        return number == .min ? .none : .number(number)
    }

    /// Sends a call with no arguments whose reply nobody waits for.
    public func send(_ destination: String, _ path: String, _ interface: String, _ member: String) {
        let status = csdbus_send(bus, destination, path, interface, member)
        if status < 0, failure == nil { failure = "cannot send \(interface).\(member) to \(destination): \(Self.text(status))" }
    }

    /// Takes method calls to `path` from now on; `process` collects them for `takeCalls`.
    public func export(path: String) throws(Failure) {
        var slot: OpaquePointer?
        let status = csdbus_add_object(bus, &slot, path, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            return Unmanaged<BusConnection>.fromOpaque(userdata).takeUnretainedValue().received(message)
        }, Unmanaged.passUnretained(self).toOpaque())
        guard status >= 0 else { throw Failure("cannot export \(path) on the D-Bus bus: \(Self.text(status))") }
        exportSlot = slot
    }

    private func received(_ message: OpaquePointer) -> Int32 {
        var incoming = csdbus_incoming()
        guard csdbus_read_incoming(message, &incoming) > 0, let member = incoming.member else { return 0 }
        nextCall += 1
        held[nextCall] = csdbus_message_ref(message)
        arrived.append(Call(member: String(cString: member), argument: incoming.argument.map { String(cString: $0) },
                            sender: incoming.sender.map { String(cString: $0) }, id: nextCall))
        return 1
    }

    /// Owns `name` on the bus (waits for the bus's answer), or throws why not.
    public func requestName(_ name: String) throws(Failure) {
        let status = csdbus_request_name(bus, name)
        guard status >= 0 else {
            throw Failure(status == -EEXIST ? "another program owns \(name) on the D-Bus bus at \(address)"
                                            : "cannot own \(name) on the D-Bus bus at \(address): \(Self.text(status))")
        }
    }

    /// Calls `member` with one string and waits at most `milliseconds` for its a{sv} reply:
    /// its string, number and boolean values as text, by key.
    public func callDictionary(_ destination: String, _ path: String, _ interface: String, _ member: String, _ argument: String,
                               milliseconds: UInt64) throws(Failure) -> [String: String] {
        var text: UnsafeMutablePointer<CChar>?
        var error: UnsafeMutablePointer<CChar>?
        let status = csdbus_call_dictionary(bus, destination, path, interface, member, argument, milliseconds * 1000, &text, &error)
        defer {
            free(text)
            free(error)
        }
        guard status >= 0 else {
            let why = error.map { String(cString: $0) } ?? Self.text(status)
            throw Failure("\(interface).\(member) on \(destination) \(path): \(why)")
        }
        var entries: [String: String] = [:]
        for line in (text.map { String(cString: $0) } ?? "").split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            entries[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return entries
    }

    /// Tells of every change of `name`'s owner from now on (`takeOwnerChanges`); waits for the
    /// bus to take the match.
    public func watchOwner(of name: String) throws(Failure) {
        var slot: OpaquePointer?
        let rule = "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
            + "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'"
        let status = csdbus_add_match(bus, &slot, rule, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            Unmanaged<BusConnection>.fromOpaque(userdata).takeUnretainedValue().ownerChanged(message)
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
        guard status >= 0, let slot else { throw Failure("cannot watch \(name) on the D-Bus bus: \(Self.text(status))") }
        matchSlots.append(slot)
    }

    private func ownerChanged(_ message: OpaquePointer) {
        var strings: (UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) = (nil, nil, nil)
        withUnsafeMutablePointer(to: &strings) {
            $0.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: 3) { csdbus_read_strings(message, $0) }
        }
        guard let name = strings.0 else { return }
        ownerChanges.append(OwnerChange(name: String(cString: name), newOwner: strings.2.map { String(cString: $0) } ?? ""))
    }

    /// The owner changes that came since the last time, oldest first.
    public func takeOwnerChanges() -> [OwnerChange] {
        defer { ownerChanges.removeAll() }
        return ownerChanges
    }

    /// Reads and writes what the socket allows and dispatches what came, without waiting.
    public func process() {
        guard failure == nil else { return }
        while true {
            let status = csdbus_process(bus)
            if status == 0 { return }
            if status < 0 {
                failure = "the D-Bus connection to \(address) failed: \(Self.text(status))"
                return
            }
        }
    }

    /// The method calls that came since the last time, oldest first.
    public func takeCalls() -> [Call] {
        defer { arrived.removeAll() }
        return arrived
    }

    /// Answers a call with one string; a call answered already is left alone.
    public func answer(_ call: Call, _ text: String) {
        guard let message = held.removeValue(forKey: call.id) else { return }
        defer { csdbus_message_unref(message) }
        let status = csdbus_reply_text(message, text)
        if status < 0, failure == nil { failure = "cannot answer \(call.member) on the D-Bus bus: \(Self.text(status))" }
    }

    /// Answers a call with an error (`org.example.Error`, what was wrong).
    public func refuse(_ call: Call, name: String, _ message: String) {
        guard let held = held.removeValue(forKey: call.id) else { return }
        defer { csdbus_message_unref(held) }
        _ = csdbus_reply_error(held, name, message)
    }

    private static func text(_ status: Int32) -> String { String(cString: strerror(-status)) }
}
