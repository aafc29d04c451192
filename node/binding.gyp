{
  "targets": [
    {
      "target_name": "claim",
      "sources": ["src/claim_napi.c"],
      "include_dirs": ["../user/libclaim", "/usr/local/include/claimd", "/usr/include/claimd"],
      "libraries": ["-ldl"]
    }
  ]
}
