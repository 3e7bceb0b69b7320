import Foundation

/// A line chart on log-log axes, drawn as hand-written SVG (the same input giving the same
/// bytes): one line per engine of a time against a store size, for example open time against
/// keys.
enum LineChart {
  struct Series {
    let name: String
    /// `(size, seconds)` points, smallest size first.
    let points: [(size: Double, seconds: Double)]
  }

  static func svg(_ series: [Series], title: String, xLabel: String) -> String {
    let (width, height) = (1100.0, 460.0)
    let (left, right, top, bottom) = (72.0, 330.0, 48.0, 48.0)
    let points = series.flatMap(\.points).filter { $0.size > 0 && $0.seconds > 0 }
    let xLow = floor(log10(points.map(\.size).min() ?? 1_000))
    let xHigh = Swift.max(ceil(log10(points.map(\.size).max() ?? 1_000_000)), xLow + 1)
    let yLow = floor(log10(points.map(\.seconds).min() ?? 1e-4))
    let yHigh = Swift.max(ceil(log10(points.map(\.seconds).max() ?? 1)), yLow + 1)
    let plotWidth = width - left - right
    let plotHeight = height - top - bottom
    func x(_ size: Double) -> Double { left + plotWidth * (log10(size) - xLow) / (xHigh - xLow) }
    func y(_ seconds: Double) -> Double { top + plotHeight * (1 - (log10(seconds) - yLow) / (yHigh - yLow)) }
    let f = RatioChart.f
    var out = RatioChart.header(width: width, height: height, title: title)
    for power in Int(yLow)...Int(yHigh) {
      let lineY = y(pow(10, Double(power)))
      out.append(
        "<line x1=\"\(f(left))\" y1=\"\(f(lineY))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(lineY))\" stroke=\"#ddd\"/>"
          + "<text x=\"\(f(left - 6))\" y=\"\(f(lineY + 4))\" text-anchor=\"end\">"
          + "\(RatioChart.label(pow(10, Double(power)), .seconds))</text>")
    }
    for power in Int(xLow)...Int(xHigh) {
      let lineX = x(pow(10, Double(power)))
      out.append(
        "<line x1=\"\(f(lineX))\" y1=\"\(f(top))\" x2=\"\(f(lineX))\" y2=\"\(f(top + plotHeight))\" stroke=\"#ddd\"/>"
          + "<text x=\"\(f(lineX))\" y=\"\(f(top + plotHeight + 16))\" text-anchor=\"middle\">"
          + "\(Number.grouped(pow(10, Double(power))))</text>")
    }
    out.append(
      "<text x=\"\(f(left + plotWidth / 2))\" y=\"\(f(height - 12))\" text-anchor=\"middle\">"
        + "\(RatioChart.escape(xLabel))</text>")
    for (index, line) in series.enumerated() {
      let color = RatioChart.colors[index % RatioChart.colors.count]
      let drawn = line.points.filter { $0.size > 0 && $0.seconds > 0 }
      guard !drawn.isEmpty else { continue }
      let path = drawn.map { "\(f(x($0.size))),\(f(y($0.seconds)))" }.joined(separator: " ")
      out.append("<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"/>")
      for point in drawn {
        out.append(
          "<circle cx=\"\(f(x(point.size)))\" cy=\"\(f(y(point.seconds)))\" r=\"4\" fill=\"\(color)\">"
            + "<title>\(RatioChart.escape(line.name)), \(Number.grouped(point.size)): "
            + "\(Number.fixed(point.seconds * 1e3, 2)) ms</title></circle>")
      }
      let legendY = top + 8 + Double(index) * 18
      out.append(
        "<rect x=\"\(f(width - right + 16))\" y=\"\(f(legendY - 10))\" width=\"12\" height=\"12\" fill=\"\(color)\"/>"
          + "<text x=\"\(f(width - right + 32))\" y=\"\(f(legendY))\">\(RatioChart.escape(line.name))</text>")
    }
    out.append("</svg>")
    return out.joined(separator: "\n") + "\n"
  }
}
