public import Glibc

/// An AF_UNIX socket address: a filesystem path, or (`@name`) a name in Linux's abstract
/// namespace, which has a leading NUL and no terminator, its end given by the length.
public struct UnixSocketAddress: Sendable, CustomStringConvertible {
    /// As given: `/run/user/1000/clickaway/ctl.sock` or `@name`.
    public let description: String
    private let storage: sockaddr_un
    private let length: socklen_t

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLong(String, limit: Int)
        case notAbsolute(String)

        public var description: String {
            switch self {
            case .tooLong(let name, let limit): "\(name) is longer than a Unix socket address allows (\(limit) bytes)"
            case .notAbsolute(let name): "\(name) is neither an absolute path nor an abstract socket name (@name)"
            }
        }
    }

    /// The longest path or abstract name that fits.
    public static let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// A path (any path: relative ones name a socket relative to the working directory).
    public init(path: String) throws(Problem) {
        try self.init(bytes: Array(path.utf8) + [0], description: path)
    }

    /// What $NOTIFY_SOCKET names: an absolute path, or `@name` in the abstract namespace.
    public init(notifySocket name: String) throws(Problem) {
        switch name.first {
        case "@": try self.init(bytes: [0] + Array(name.utf8.dropFirst()), description: name)
        case "/": try self.init(path: name)
        default: throw .notAbsolute(name)
        }
    }

    private init(bytes: [UInt8], description: String) throws(Problem) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard bytes.count <= Self.capacity + 1 else { throw .tooLong(description, limit: Self.capacity) }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        storage = address
        length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + bytes.count)
        self.description = description
    }

    /// Calls `body` with the address as bind(2), connect(2) and sendto(2) take it.
    public func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        try withUnsafePointer(to: storage) {
            try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, length) }
        }
    }
}
