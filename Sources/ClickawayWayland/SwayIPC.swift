public import ClickawayJSON
internal import ClickawaySystem
internal import Glibc
public import SystemPackage

/// One connection to sway's IPC socket (the i3 IPC protocol), beside the Wayland protocol:
/// where the windows are, which Wayland tells no client.: messages are "i3-ipc", a
/// 32-bit payload length and a 32-bit type in host byte order, then JSON. Replies come in
/// the order of the requests; events (type with the high bit set) come in between once
/// subscribed.
///
/// Non-blocking: `send` queues, `flush` writes what the socket takes, `read` returns the
/// complete messages received. `call` waits (bounded) for one reply, for start-up and
/// `sync` only.
public final class SwayIPC {
    public enum MessageType: UInt32, Sendable {
        case runCommand = 0
        case subscribe = 2
        case getOutputs = 3
        case getTree = 4
    }

    public struct Message: Sendable {
        public var type: UInt32
        public var payload: JSON
        /// Events have the high bit of their type set.
        public var isEvent: Bool { type & 0x8000_0000 != 0 }
    }

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public let path: String
    public let descriptor: FileDescriptor
    private var input: [UInt8] = []
    private var output: [UInt8] = []
    /// Replies larger than this are a broken peer, not a tree (sway's are kilobytes).
    static let maxPayload = 64 << 20

    public init(path: String) throws(Failure) {
        self.path = path
        let address: UnixSocketAddress
        do { address = try UnixSocketAddress(path: path) } catch {
            throw Failure(description: "sway's IPC path ($SWAYSOCK) is too long for a socket address: \(path)")
        }
        do {
            descriptor = try FileDescriptor.connectedUnixSocket(address)
            try descriptor.setNonBlocking()
        } catch {
            throw Failure(description: "cannot connect to sway's IPC at \(path) ($SWAYSOCK): \(error)")
        }
    }

    deinit { try? descriptor.close() }

    /// Queues one request; `flush` sends it.
    public func send(_ type: MessageType, _ payload: String = "") {
        let body = Array(payload.utf8)
        output += Array("i3-ipc".utf8)
        withUnsafeBytes(of: UInt32(body.count)) { output += $0 }
        withUnsafeBytes(of: type.rawValue) { output += $0 }
        output += body
    }

    /// Writes what the socket takes now. Returns whether more is left to write.
    @discardableResult
    public func flush() throws(Failure) -> Bool {
        while !output.isEmpty {
            let n: Int
            do { n = try descriptor.writeAvailable(output) } catch {
                throw Failure(description: "cannot write to sway's IPC at \(path): \(error)")
            }
            if n == 0 { return true }
            output.removeFirst(n)
        }
        return false
    }

    /// Reads what the socket holds and returns the complete messages, oldest first.
    public func read() throws(Failure) -> [Message] {
        while true {
            let n: Int?
            do { n = try descriptor.readAvailable(appendingTo: &input) } catch {
                throw Failure(description: "cannot read from sway's IPC at \(path): \(error)")
            }
            guard let n else { break }
            if n == 0 { throw Failure(description: "sway closed its IPC connection at \(path)") }
        }
        var messages: [Message] = []
        while input.count >= 14 {
            guard input.prefix(6).elementsEqual("i3-ipc".utf8) else {
                throw Failure(description: "sway's IPC at \(path) sent a message without the i3-ipc header")
            }
            let length = Int(input[6..<10].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
            let type = input[10..<14].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            guard length <= Self.maxPayload else {
                throw Failure(description: "sway's IPC at \(path) announced a \(length)-byte message")
            }
            guard input.count >= 14 + length else { break }
            let text = String(decoding: input[14..<(14 + length)], as: UTF8.self)
            input.removeFirst(14 + length)
            do {
                messages.append(Message(type: type, payload: try JSON.parse(text)))
            } catch {
                throw Failure(description: "sway's IPC at \(path) sent malformed JSON: \(error)")
            }
        }
        return messages
    }

    /// Sends one request and waits at most `timeoutMs` for the next reply, which must be
    /// its own: call it only with no other reply outstanding. Events read meanwhile are
    /// dropped: call it before subscribing, or where a fresh state follows.
    public func call(_ type: MessageType, _ payload: String = "", timeoutMs: Int64 = 2000) throws(Failure) -> JSON {
        send(type, payload)
        let deadline = Deadline.inMilliseconds(timeoutMs)
        while true {
            let writing = try flush()
            if let reply = try read().first(where: { !$0.isEvent }) { return reply.payload }
            guard !deadline.hasPassed() else { throw Failure(description: "sway's IPC at \(path) did not answer within \(timeoutMs) ms") }
            _ = try? descriptor.wait(for: writing ? [.readable, .writable] : .readable, until: deadline)
        }
    }
}
