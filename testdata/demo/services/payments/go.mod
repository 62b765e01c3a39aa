module github.com/company/payments

go 1.22
