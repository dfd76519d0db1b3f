module github.com/paimon-cleanup/paimon-cleanup/bindings/go

go 1.19
