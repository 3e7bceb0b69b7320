/// One of the peer comparison's targets, as a ratio (or a figure) measured in the run, and whether it was met.
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

  /// How far from the requirement: `+35%` past it, `-20%` short of it.
  var margin: String {
    guard let measured, required > 0 else { return "n/a" }
    let fraction = atMost ? (required - measured) / required : (measured - required) / required
    return (fraction >= 0 ? "+" : "") + Number.fixed(fraction * 100, 0) + "%"
  }

  static func table(_ targets: [PeerTarget], format: (Double) -> String = { Number.fixed($0, 2) }) -> String {
    var table = Table([
      ("target", .left), ("at", .left), ("required", .right), ("measured", .right), ("met", .left),
      ("margin", .right),
    ])
    for target in targets {
      table.append([
        target.target, target.at, (target.atMost ? "≤ " : "≥ ") + format(target.required),
        target.measured.map(format) ?? "not measured", target.met.map { $0 ? "yes" : "**no**" } ?? "n/a",
        target.margin,
      ])
    }
    return table.render()
  }
}
