import Foundation
import PeerKit

/// Grouped bar charts drawn as hand-written SVG, the same input giving the same bytes: one
/// panel per store size, one group of bars per workload, one bar per engine, on a log scale.
/// Ratios (CipherCask ÷ peer) grow from 1× (bars above the line are workloads where CipherCask
/// is faster); times grow from the panel's floor.
enum RatioChart {
  /// What a panel's values are.
  enum Unit {
    /// CipherCask ÷ peer; bars grow from 1×.
    case ratio
    /// Seconds of one operation, labelled in µs or ms; bars grow from the floor.
    case seconds
  }

  struct Panel {
    let title: String
    let groups: [String]
    let series: [String]
    /// `values[group][series]`: the ratio, or `nil` where it was not measured.
    let values: [[Double?]]
    var unit = Unit.ratio
  }

  static let colors = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f", "#ff9da7", "#bab0ac",
  ]

  /// The panels of a `peers` report: throughput and open per size, then durable puts.
  static func panels(_ report: PeersCommand.Report) -> [Panel] {
    let series = report.settings.peers
    var panels: [Panel] = []
    let workloads = PeersCommand.throughputWorkloads + [KVWorkload.open]
    for size in report.sizes {
      guard let cask = size.engine(PeersCommand.cipherCask.name) else { continue }
      let values = workloads.map { workload in
        series.map { peer -> Double? in
          // Open as the table shows it: the password derivation left out, the peer's time over ours.
          workload == KVWorkload.open
            ? ReportCommand.openRatio(cask, size.engine(peer)) : cask.speedup(workload, over: size.engine(peer))
        }
      }
      panels.append(
        Panel(
          title: "\(Number.grouped(size.keys)) keys", groups: workloads, series: series, values: values))
    }
    if let cask = report.durable.named(PeersCommand.cipherCask.name) {
      let values = KVWorkload.durable.map { workload in
        series.map { cask.speedup(workload, over: report.durable.named($0)) }
      }
      panels.append(
        Panel(
          title: "durable puts (1 and 8 writers)", groups: ["1 writer", "8 writers"], series: series, values: values))
    }
    return panels
  }

  static func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
      .replacingOccurrences(of: ">", with: "&gt;")
  }

  static func label(_ value: Double, _ unit: Unit) -> String {
    switch unit {
    case .ratio: return value >= 1 ? Number.grouped(value) + "×" : String(format: "%g×", value)
    case .seconds:
      if value >= 1 { return Number.grouped(value) + " s" }
      if value >= 1e-3 { return String(format: "%g ms", (value * 1e3).rounded()) }
      return String(format: "%g µs", (value * 1e9).rounded() / 1e3)
    }
  }

  static func tooltip(_ value: Double, _ unit: Unit, group: String, series: String) -> String {
    switch unit {
    case .ratio: return "\(escape(group)), CipherCask ÷ \(escape(series)): \(String(format: "%.2f", value))×"
    case .seconds: return "\(escape(group)), \(escape(series)): \(Number.microseconds(value)) µs"
    }
  }

  static func svg(_ panels: [Panel], title: String) -> String {
    let width = 1000.0
    let panelHeight = 300.0
    let left = 64.0
    let right = 16.0
    let top = 56.0
    let legendHeight = 28.0
    let height = top + legendHeight + Double(panels.count) * panelHeight + 8
    var out = header(width: width, height: height, title: title)
    let series = panels.first?.series ?? []
    var x = left
    for (index, name) in series.enumerated() {
      out.append(
        "<rect x=\"\(Int(x))\" y=\"36\" width=\"12\" height=\"12\" fill=\"\(colors[index % colors.count])\"/>"
          + "<text x=\"\(Int(x + 16))\" y=\"46\">\(escape(name))</text>")
      x += 24 + Double(name.count) * 7
    }
    for (number, panel) in panels.enumerated() {
      let y0 = top + legendHeight + Double(number) * panelHeight
      out.append(contentsOf: draw(panel, x: left, y: y0, width: width - left - right, height: panelHeight))
    }
    out.append("</svg>")
    return out.joined(separator: "\n") + "\n"
  }

  /// One panel: title, log-scale grid with 1× emphasised, bars growing from 1×, group labels.
  static func draw(_ panel: Panel, x: Double, y: Double, width: Double, height: Double) -> [String] {
    let plotTop = y + 24
    let plotHeight = height - 24 - 44
    let measured = panel.values.flatMap { $0.compactMap { $0 } }.filter { $0 > 0 && $0.isFinite }
    let floorValue = panel.unit == .ratio ? Swift.min(measured.min() ?? 1, 1) : (measured.min() ?? 1e-6)
    let ceilingValue = panel.unit == .ratio ? Swift.max(measured.max() ?? 1, 1) : (measured.max() ?? 1e-3)
    let low = floor(log10(floorValue * 0.999))
    let high = ceil(log10(ceilingValue * 1.001))
    let span = Swift.max(high - low, 1)
    func yOf(_ ratio: Double) -> Double {
      plotTop + plotHeight * (1 - (log10(ratio) - low) / span)
    }
    var out: [String] = []
    out.append(
      "<text x=\"\(f(x))\" y=\"\(f(y + 14))\" font-size=\"14\" font-weight=\"bold\">\(escape(panel.title))</text>")
    for power in Int(low)...Int(high) {
      let ratio = pow(10, Double(power))
      let lineY = yOf(ratio)
      let stroke = power == 0 && panel.unit == .ratio ? "#333" : "#ddd"
      out.append(
        "<line x1=\"\(f(x))\" y1=\"\(f(lineY))\" x2=\"\(f(x + width))\" y2=\"\(f(lineY))\" stroke=\"\(stroke)\"/>"
          + "<text x=\"\(f(x - 6))\" y=\"\(f(lineY + 4))\" text-anchor=\"end\">\(label(ratio, panel.unit))</text>")
    }
    let groupWidth = width / Double(Swift.max(panel.groups.count, 1))
    let barWidth = groupWidth * 0.8 / Double(Swift.max(panel.series.count, 1))
    let baseline = panel.unit == .ratio ? yOf(1) : plotTop + plotHeight
    for (group, name) in panel.groups.enumerated() {
      let groupX = x + Double(group) * groupWidth + groupWidth * 0.1
      for (index, peer) in panel.series.enumerated() {
        guard let ratio = panel.values[group][index], ratio > 0, ratio.isFinite else { continue }
        let top = Swift.min(yOf(ratio), baseline)
        let barHeight = Swift.max(abs(yOf(ratio) - baseline), 1)
        out.append(
          "<rect x=\"\(f(groupX + Double(index) * barWidth))\" y=\"\(f(top))\" width=\"\(f(barWidth - 1))\""
            + " height=\"\(f(barHeight))\" fill=\"\(colors[index % colors.count])\">"
            + "<title>\(tooltip(ratio, panel.unit, group: name, series: peer))</title></rect>")
      }
      out.append(
        "<text x=\"\(f(groupX + groupWidth * 0.4))\" y=\"\(f(plotTop + plotHeight + 16))\""
          + " text-anchor=\"middle\">\(escape(name))</text>")
    }
    return out
  }

  /// The opening of a chart of either kind: its size, a white ground and the title.
  static func header(width: Double, height: Double, title: String) -> [String] {
    [
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\""
        + " viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"sans-serif\" font-size=\"12\">",
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
      "<text x=\"\(Int(width / 2))\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">\(escape(title))</text>",
    ]
  }

  static func f(_ value: Double) -> String {
    String(format: "%.1f", value)
  }
}
