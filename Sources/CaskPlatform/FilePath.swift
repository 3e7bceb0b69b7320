/// The directory part of a path, by hand: Foundation's `NSString.deletingLastPathComponent`
/// traps on a one-character name (`"a"`). Prevents: `cask encrypt IN o` and an export into
/// `a/b` ending the process.
package enum FilePath {
  /// `"a/b/c"` -> `"a/b"`, `"/c"` -> `"/"`, `"c"` -> `""` (trailing slashes ignored).
  package static func directory(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "" }
    return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
  }
}
