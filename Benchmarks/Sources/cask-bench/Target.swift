/// A row of the report's targets table: a figure measured, where, and whether it was met. The
/// codec and the engine record theirs in their results files; the report works out the others.
struct Target: Codable {
  let target: String
  /// Where it was measured (`1,000,000 keys`, `durable`); a target recorded in a results file
  /// leaves it out, and the report names the file.
  let at: String?
  let required: Double
  /// Whether `measured` must be at most (rather than at least) `required`; the codec's files
  /// leave it out for their minimums.
  let atMost: Bool?
  let measured: Double?
  let met: Bool?

  init(_ target: String, at: String? = nil, required: Double, atMost: Bool = false, measured: Double?) {
    self.target = target
    self.at = at
    self.required = required
    self.atMost = atMost
    self.measured = measured
    met = measured.map { atMost ? $0 <= required : $0 >= required }
  }
}
