/// A harness failure, worded as what did not happen.
public struct HarnessError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
