package search

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Synthetic corpora for tests and benchmarks: real software words with a
// Zipf-like skew, a long tail of made-up words, some Chinese text, and
// field sizes like the metadata reader produces (a sentence of description,
// a README paragraph, a handful of keywords).

var realWords = strings.Fields(`order orders sdk client server service api http grpc rest graphql
	auth oauth token user account payment billing invoice cart checkout product catalog search index
	query cache redis postgres mysql sqlite database migration schema model entity repository
	controller router middleware handler request response json yaml config settings env logging
	logger metrics tracing monitor alert dashboard admin panel ui web frontend backend react vue
	angular svelte next nuxt node deno bun typescript javascript go golang rust python java kotlin
	swift android ios mobile desktop electron tauri cli tool tools utility utils helper library
	framework plugin extension theme template starter boilerplate example demo test tests testing
	mock fixture benchmark build bundle webpack vite rollup esbuild compiler parser lexer ast
	interpreter runtime engine worker queue job scheduler cron event stream kafka rabbitmq message
	notification email sms chat bot ai ml model training inference vector embedding llm agent
	prompt data pipeline etl analytics report export import file storage upload download image
	video audio media stream player editor markdown docs documentation site blog cms wiki
	kubernetes docker container deploy deployment infra terraform ansible helm chart operator
	proxy gateway load balancer network dns tls certificate security crypto hash encryption
	validation form input table grid chart graph map geo location time date calendar i18n
	translation locale store state redux hooks component components design system icons fonts`)

var zhWords = strings.Fields(`订单 客户端 服务 类型 定义 用户 支付 数据 接口 网关 日志 配置 工具 管理 系统 平台
	搜索 索引 缓存 消息 队列 存储 认证 权限 监控 测试 部署 前端 后端 组件 模板 文档 框架 引擎
	商品 购物车 结算 发票 账户 报表 导出 导入 文件 上传 下载 图片 视频 音频 编辑器 插件 主题
	示例 演示 脚本 任务 调度 事件 通知 邮件 短信 聊天 机器人 模型 训练 推理 向量 嵌入 代理`)

type corpus struct {
	r     *rand.Rand
	vocab []string
	zipf  *rand.Zipf
}

func newCorpus(seed uint64) *corpus {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	vocab := append([]string(nil), realWords...)
	syl := strings.Fields("ka lo mi ra ven tor zu pel an ix qu or sta bri no fen da gal")
	for i := 0; len(vocab) < 4000; i++ {
		w := ""
		for n := 2 + r.IntN(3); n > 0; n-- {
			w += syl[r.IntN(len(syl))]
		}
		vocab = append(vocab, w)
	}
	// Real words spread over the frequency ranks, as in real metadata.
	r.Shuffle(len(vocab), func(i, j int) { vocab[i], vocab[j] = vocab[j], vocab[i] })
	return &corpus{r: r, vocab: vocab, zipf: rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))}
}

func (c *corpus) word() string { return c.vocab[c.zipf.Uint64()] }

func (c *corpus) words(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = c.word()
	}
	return out
}

func (c *corpus) zh(n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(zhWords[c.r.IntN(len(zhWords))])
	}
	return b.String()
}

func (c *corpus) doc(i int) Doc {
	r := c.r
	name := strings.Join(c.words(1+r.IntN(3)), "-")
	name = fmt.Sprintf("%s-%d", name, i) // names are mostly distinct, like real folders
	org := c.word()
	d := Doc{
		ID:       fmt.Sprintf("p%06d", i),
		SortKey:  name + "\x00/home/dev/src/" + org + "/" + name,
		Name:     name,
		Path:     "/home/dev/src/" + org + "/" + name,
		Keywords: c.words(r.IntN(8)),
		Tags:     c.words(r.IntN(4)),
	}
	for range r.IntN(3) {
		switch r.IntN(3) {
		case 0:
			d.Packages = append(d.Packages, "@"+org+"/"+name)
		case 1:
			d.Packages = append(d.Packages, "github.com/"+org+"/"+name)
		default:
			d.Packages = append(d.Packages, "org."+org+":"+name+"-core")
		}
	}
	if r.IntN(4) == 0 {
		d.Aliases = []string{c.word() + "-" + c.word()}
	}
	if r.IntN(5) == 0 {
		d.Description = c.zh(4 + r.IntN(6))
		d.Readme = c.zh(20+r.IntN(40)) + " " + strings.Join(c.words(10), " ")
	} else {
		d.Description = strings.Join(c.words(8+r.IntN(18)), " ")
		d.Readme = strings.Join(c.words(40+r.IntN(80)), " ")
	}
	return d
}

func (c *corpus) docs(n int) []Doc {
	out := make([]Doc, n)
	for i := range out {
		out[i] = c.doc(i)
	}
	return out
}

// queries returns a varied query mix: exact names and packages, common and
// rare words, phrases, camelCase spellings, Chinese, and misses.
func (c *corpus) queries(docs []Doc, n int) []string {
	r := c.r
	out := make([]string, 0, n)
	for len(out) < n {
		d := docs[r.IntN(len(docs))]
		switch r.IntN(9) {
		case 0:
			out = append(out, d.Name)
		case 1:
			if len(d.Packages) > 0 {
				out = append(out, d.Packages[0])
			}
		case 2:
			out = append(out, c.word())
		case 3:
			out = append(out, strings.Join(c.words(2+r.IntN(3)), " "))
		case 4:
			w := c.words(2)
			out = append(out, w[0]+strings.ToUpper(w[1][:1])+w[1][1:])
		case 5:
			out = append(out, zhWords[r.IntN(len(zhWords))]+" "+zhWords[r.IntN(len(zhWords))])
		case 6:
			out = append(out, realWords[r.IntN(len(realWords))])
		case 7:
			out = append(out, "nosuchword"+fmt.Sprint(r.IntN(1000)))
		default:
			out = append(out, "a service for "+strings.Join(c.words(3), " ")+" with "+c.word())
		}
	}
	return out
}

// typos returns misspelt names of docs, as an agent types them: one slip
// in a part of 4–7 letters, two in a part of 8 or more, or two
// neighbouring letters swapped.
func (c *corpus) typos(docs []Doc, n int) []string {
	r := c.r
	const letters = "abcdefghijklmnopqrstuvwxyz"
	slip := func(w string) string {
		p := r.IntN(len(w))
		switch r.IntN(4) {
		case 0:
			return w[:p] + w[p+1:]
		case 1:
			return w[:p] + string(letters[r.IntN(26)]) + w[p+1:]
		case 2:
			return w[:p] + string(letters[r.IntN(26)]) + w[p:]
		}
		if p == len(w)-1 {
			p--
		}
		return w[:p] + string(w[p+1]) + string(w[p]) + w[p+2:]
	}
	out := make([]string, 0, n)
	for len(out) < n {
		parts := strings.Split(docs[r.IntN(len(docs))].Name, "-")
		i := r.IntN(len(parts))
		w := parts[i]
		if len(w) < 4 || strings.Trim(w, letters) != "" {
			continue
		}
		w = slip(w)
		if len(parts[i]) >= 8 {
			w = slip(w)
		}
		parts[i] = w
		// Mostly the whole name as typed, sometimes the misspelt word alone.
		if r.IntN(3) == 0 {
			out = append(out, w)
		} else {
			out = append(out, strings.Join(parts[:len(parts)-1], "-")) // without the "-123" suffix
		}
	}
	return out
}
