/// "1 popup", "2 popups", "0 exclusions": a count with its noun, plural unless it is one.
public func counted(_ count: Int, _ singular: String, plural: String? = nil) -> String {
    "\(count) " + (count == 1 ? singular : plural ?? singular + "s")
}
