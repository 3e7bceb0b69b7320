/// "Did you mean ...?" for a mistyped subcommand or option name: the known name closest to
/// what was typed, when it is close enough to be the one meant.
package enum Suggestion {
  /// The name in `candidates` nearest to `typed` (at most a third of its length in edits,
  /// and at most 2), or nil.
  package static func nearest(to typed: String, in candidates: [String]) -> String? {
    let typedScalars = Array(typed.unicodeScalars)
    let limit = min(2, max(1, typedScalars.count / 3))
    var best: (name: String, distance: Int)?
    for candidate in candidates {
      let distance = editDistance(typedScalars, Array(candidate.unicodeScalars))
      if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
    }
    return best?.name
  }

  /// The message's tail: ` (did you mean 'NAME'?)`, or nothing.
  package static func hint(_ typed: String, in candidates: [String], prefix: String = "") -> String {
    nearest(to: typed, in: candidates).map { " (did you mean '\(prefix)\($0)'?)" } ?? ""
  }

  /// Edits (insert, delete, replace, swap of neighbours) that turn `a` into `b`.
  static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    // A word far longer than any name is no typo of one (and would cost O(n·m) here).
    guard a.count < 64 && b.count < 64 else { return .max }
    var previous2 = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          current[j] = min(current[j], previous2[j - 2] + 1)
        }
      }
      (previous2, previous, current) = (previous, current, previous2)
    }
    return previous[b.count]
  }
}
