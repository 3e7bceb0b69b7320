import Foundation

/// Byte counts for people: `512 B`, `12.3 KiB`, `4.0 MiB`.
enum ByteCount {
  static func format(_ bytes: Double) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = bytes
    var index = 0
    while value >= 1024 && index < units.count - 1 {
      value /= 1024
      index += 1
    }
    return index == 0 ? "\(Int(value)) B" : String(format: "%.1f", value) + " " + units[index]
  }

  static func format(_ bytes: UInt64) -> String {
    format(Double(bytes))
  }
}

/// `1 segment`, `2 segments`.
func counted(_ count: Int, _ noun: String) -> String {
  "\(count) \(noun)\(count == 1 ? "" : "s")"
}
