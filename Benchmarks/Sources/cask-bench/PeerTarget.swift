/// A target of the report's targets table: a ratio (or a figure) measured in a run, where, and whether it was met.
struct PeerTarget: Codable {
  let target: String
  /// Where it was measured (`1,000,000 keys`, `durable puts, 8 writers`).
  let at: String
  let required: Double
  /// Whether `measured` must be at most (rather than at least) `required`.
  let atMost: Bool
  let measured: Double?
  let met: Bool?

  init(_ target: String, at: String, required: Double, atMost: Bool = false, measured: Double?) {
    self.target = target
    self.at = at
    self.required = required
    self.atMost = atMost
    self.measured = measured
    met = measured.map { atMost ? $0 <= required : $0 >= required }
  }
}
