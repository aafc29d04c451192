module claimd.dev/tests/claimsvc

go 1.19

require claimd.dev/claim v0.0.0

replace claimd.dev/claim => ../../../../go/claim
