import Foundation

/// A string-keyed dictionary, which Foundation decodes with its keys as written whatever the
/// key strategy.
protocol JSONTapeStringKeyed {
  static func decodeKeepingKeys(from decoder: JSONTapeDecoder) throws -> Any
}

extension Dictionary: JSONTapeStringKeyed where Key == String, Value: Decodable {
  static func decodeKeepingKeys(from decoder: JSONTapeDecoder) throws -> Any {
    let state = decoder.state
    let object = state.token(decoder.index)
    guard object.kind == .object else { throw state.giveUp() }
    var result: [String: Value] = [:]
    result.reserveCapacity(Int(object.length))
    var key = decoder.index + 1
    for _ in 0..<Int(object.length) {
      let name = try state.string(state.token(key))
      let value = try state.value(Value.self, at: key + 1, in: decoder, key: JSONTapeKey(stringValue: name))
      // The first of two equal keys wins, as in Foundation.
      if result[name] == nil { result[name] = value }
      key = Int(state.token(key + 1).end)
    }
    return result
  }
}
