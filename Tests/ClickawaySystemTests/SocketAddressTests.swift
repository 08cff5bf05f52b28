import ClickawaySystem
import Glibc
import SystemPackage
import Testing

@Suite struct SocketAddressTests {
    @Test func pathsUpToTheLimitFitAndLongerOnesAreRefused() throws {
        let limit = UnixSocketAddress.capacity
        #expect(limit == 107)
        _ = try UnixSocketAddress(path: "/" + String(repeating: "x", count: limit - 1))
        #expect(throws: UnixSocketAddress.Problem.tooLong("/" + String(repeating: "x", count: limit), limit: limit)) {
            try UnixSocketAddress(path: "/" + String(repeating: "x", count: limit))
        }
    }

    @Test func notifySocketNamesArePathsOrAbstract() throws {
        #expect(try UnixSocketAddress(notifySocket: "/run/systemd/notify").description == "/run/systemd/notify")
        #expect(try UnixSocketAddress(notifySocket: "@name").description == "@name")
        #expect(throws: UnixSocketAddress.Problem.notAbsolute("relative")) { try UnixSocketAddress(notifySocket: "relative") }
    }

    @Test func abstractAddressesLeaveNoTerminatorInTheLength() throws {
        let address = try UnixSocketAddress(notifySocket: "@abc")
        let offset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
        address.withSockaddr { pointer, length in
            #expect(Int(length) == offset + 4)
            pointer.withMemoryRebound(to: sockaddr_un.self, capacity: 1) { un in
                withUnsafeBytes(of: un.pointee.sun_path) { bytes in
                    #expect(Array(bytes.prefix(4)) == [0] + Array("abc".utf8))
                }
            }
        }
    }

    @Test func aStreamSocketListensAcceptsAndKnowsItsPeer() throws {
        let path = "/tmp/clickaway-system-test-\(getpid()).sock"
        unlink(path)
        defer { unlink(path) }
        let address = try UnixSocketAddress(path: path)
        let listener = try FileDescriptor.unixSocket(.stream)
        defer { try? listener.close() }
        try listener.bind(to: address)
        try listener.listen(backlog: 4)
        try listener.setNonBlocking()
        #expect(try listener.acceptConnection() == nil)
        let client = try FileDescriptor.connectedUnixSocket(address)
        // Closed once: a second close would close whatever descriptor another test running
        // in parallel was given that number meanwhile.
        var clientOpen = true
        defer { if clientOpen { try? client.close() } }
        #expect(try listener.wait(until: .inMilliseconds(5000)).canRead)
        let server = try #require(try listener.acceptConnection())
        defer { try? server.close() }
        #expect(server.peerUID == getuid())
        try client.sendAll(Array("hello\n".utf8))
        var received: [UInt8] = []
        #expect(try server.wait(until: .inMilliseconds(5000)).canRead)
        #expect(try server.readAvailable(appendingTo: &received) == 6)
        #expect(received == Array("hello\n".utf8))
        clientOpen = false
        try client.close()
        _ = try server.wait(until: .inMilliseconds(5000))
        #expect(try server.readAvailable(appendingTo: &received) == 0)
    }
}
