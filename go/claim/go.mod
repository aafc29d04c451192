module claimd.dev/claim

go 1.19
