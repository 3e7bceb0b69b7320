import Foundation

/// The REST client's User with its address, as a Codable value.
struct User: Codable, Identifiable, Sendable, Equatable {
  struct Address: Codable, Sendable, Equatable {
    var street: String
    var city: String
    var state: String
    var zip: String
  }

  var id: String
  var email: String
  var first: String
  var last: String
  var address: Address?
}
