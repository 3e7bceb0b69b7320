import Foundation

/// A JSON value of any shape, as `cask sync` moves the objects that `cask import` and
/// `cask pull` stored without a Swift type.
enum JSONValue: Codable, Sendable, Equatable {
  case null
  case bool(Bool)
  case integer(Int64)
  case number(Double)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int64.self) {
      self = .integer(value)
    } else if let value = try? container.decode(Double.self) {
      self = .number(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([JSONValue].self) {
      self = .array(value)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .integer(let value): try container.encode(value)
    case .number(let value): try container.encode(value)
    case .string(let value): try container.encode(value)
    case .array(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    }
  }
}

/// One stored object of a collection without a Swift type: its JSON as it is. Its id is the
/// store key's, which `CaskSync` takes from the key, never from the object (an object imported
/// with `--id-key uid` has no `id` field): the property is there for `Identifiable` only.
struct JSONDocument: Codable, Identifiable, Sendable, Equatable {
  var value: JSONValue
  var id: String { "" }

  init(from decoder: any Decoder) throws {
    value = try JSONValue(from: decoder)
  }

  func encode(to encoder: any Encoder) throws {
    try value.encode(to: encoder)
  }
}
